package fakeprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

const (
	bedrockKeyID  = "AKIAFAKE0000BEDROCK1"
	bedrockSecret = "fake/secret/access/key"
	bedrockModel  = "anthropic.claude-sonnet-4-5-20250929-v1:0"
)

// plainBody hides the SDK's request body's WriteTo, which fails once the SDK closed the body on
// the response (provider/bedrock.go's requestBody says why).
type plainBody struct{ io.ReadCloser }

type plainBodies struct{}

func (plainBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r = r.Clone(r.Context())
		r.Body = plainBody{r.Body}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// bedrockClient is the AWS SDK's client on the fake, signing with a key pair the fake knows.
func bedrockClient(fp *Server) *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region: "eu-west-3", BaseEndpoint: aws.String(fp.BedrockBaseURL("bedrock")), Retryer: aws.NopRetryer{},
		Credentials: credentials.NewStaticCredentialsProvider(bedrockKeyID, bedrockSecret, ""),
		HTTPClient:  &http.Client{Transport: plainBodies{}},
	})
}

func bedrockFake(t *testing.T, rules []Rule) *Server {
	fp := startFake(t, rules)
	fp.AddCredential(bedrockKeyID, "p:aws")
	return fp
}

var bedrockMessages = []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "weather in Zürich?"}}}}

func TestBedrockReachesTheSDK(t *testing.T) {
	fp := bedrockFake(t, []Rule{{Respond: []Response{{Thinking: "the user wants weather", Signature: "sig-abc", Text: "let me check",
		ToolCalls: toolCalls, Usage: &Usage{Input: 100, Output: 20, Cached: 64}}}}})
	client := bedrockClient(fp)

	out, err := client.ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{ModelId: aws.String(bedrockModel), Messages: bedrockMessages})
	if err != nil {
		t.Fatal(err)
	}
	stream := out.GetStream()
	defer stream.Close()
	var reasoning, signature, text strings.Builder
	type use struct{ id, name, input string }
	uses := map[int32]*use{}
	var order []string
	var stop types.StopReason
	var usage *types.TokenUsage
	for ev := range stream.Events() {
		switch ev := ev.(type) {
		case *types.ConverseStreamOutputMemberMessageStart:
			order = append(order, "start")
		case *types.ConverseStreamOutputMemberContentBlockStart:
			tu := ev.Value.Start.(*types.ContentBlockStartMemberToolUse).Value
			uses[*ev.Value.ContentBlockIndex] = &use{id: *tu.ToolUseId, name: *tu.Name}
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			switch d := ev.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				text.WriteString(d.Value)
			case *types.ContentBlockDeltaMemberToolUse:
				uses[*ev.Value.ContentBlockIndex].input += *d.Value.Input
			case *types.ContentBlockDeltaMemberReasoningContent:
				switch r := d.Value.(type) {
				case *types.ReasoningContentBlockDeltaMemberText:
					reasoning.WriteString(r.Value)
				case *types.ReasoningContentBlockDeltaMemberSignature:
					signature.WriteString(r.Value)
				}
			}
		case *types.ConverseStreamOutputMemberMessageStop:
			stop = ev.Value.StopReason
			order = append(order, "stop")
		case *types.ConverseStreamOutputMemberMetadata:
			usage = ev.Value.Usage
			order = append(order, "metadata")
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if reasoning.String() != "the user wants weather" || signature.String() != "sig-abc" || text.String() != "let me check" || stop != types.StopReasonToolUse {
		t.Errorf("reasoning %q signature %q text %q stop %q", reasoning.String(), signature.String(), text.String(), stop)
	}
	// Block 0 is the reasoning, 1 the text, then the calls.
	if u := uses[2]; u == nil || u.id != "call_weather_1" || u.name != "get_weather" || u.input != toolCalls[0].Arguments {
		t.Errorf("first call %+v", u)
	}
	if u := uses[3]; u == nil || u.id != "call_time_2" || u.name != "get_time" || u.input != "{}" {
		t.Errorf("second call %+v", u)
	}
	if strings.Join(order, " ") != "start stop metadata" {
		t.Errorf("events %v", order)
	}
	// Bedrock's inputTokens leaves the cache reads out.
	if usage == nil || *usage.InputTokens != 36 || *usage.OutputTokens != 20 || *usage.CacheReadInputTokens != 64 || *usage.TotalTokens != 120 {
		t.Errorf("usage %+v", usage)
	}

	whole, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String(bedrockModel), Messages: bedrockMessages})
	if err != nil {
		t.Fatal(err)
	}
	content := whole.Output.(*types.ConverseOutputMemberMessage).Value.Content
	if len(content) != 4 || whole.StopReason != types.StopReasonToolUse || *whole.Usage.CacheReadInputTokens != 64 {
		t.Fatalf("%+v", whole)
	}
	if r := content[0].(*types.ContentBlockMemberReasoningContent).Value.(*types.ReasoningContentBlockMemberReasoningText).Value; *r.Text != "the user wants weather" || *r.Signature != "sig-abc" {
		t.Errorf("reasoning %+v", r)
	}
	if c := content[1].(*types.ContentBlockMemberText).Value; c != "let me check" {
		t.Errorf("text %q", c)
	}
	tu := content[2].(*types.ContentBlockMemberToolUse).Value
	var args map[string]any
	if err := tu.Input.UnmarshalSmithyDocument(&args); err != nil || *tu.ToolUseId != "call_weather_1" || args["placename"] != "Zürich" {
		t.Errorf("tool use %+v %v %v", tu, args, err)
	}
	calls := fp.Calls()
	if len(calls) != 2 || calls[0].Model != bedrockModel || calls[0].Profile != "p:aws" || !calls[0].Stream || calls[1].Stream {
		t.Errorf("calls %+v", calls)
	}
}

// frames reads an event stream's frames: "type name payload" each, type event or exception.
func frames(t *testing.T, data []byte) []string {
	t.Helper()
	dec := eventstream.NewDecoder()
	r := bytes.NewReader(data)
	var out []string
	for r.Len() > 0 {
		msg, err := dec.Decode(r, nil)
		if err != nil {
			t.Fatalf("frame %d: %v", len(out), err)
		}
		kind := msg.Headers.Get(":message-type").String()
		name := msg.Headers.Get(":event-type")
		if kind == "exception" {
			name = msg.Headers.Get(":exception-type")
		}
		if ct := msg.Headers.Get(":content-type"); ct == nil || ct.String() != "application/json" {
			t.Errorf("frame %d: content type %v", len(out), ct)
		}
		out = append(out, kind+" "+name.String()+" "+string(msg.Payload))
	}
	return out
}

// sigV4 is an Authorization header as SigV4 writes it, for the service given.
func sigV4(service string) map[string]string {
	return map[string]string{"Authorization": "AWS4-HMAC-SHA256 Credential=" + bedrockKeyID + "/20250101/eu-west-3/" + service +
		"/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=0123abcd"}
}

const converseHi = `{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`

func TestBedrockStreamKnobs(t *testing.T) {
	text := "the quick brown fox"
	for _, c := range []struct {
		name  string
		resp  Response
		check func(t *testing.T, f []string)
	}{
		{"whole", Response{Text: "a b", Usage: &Usage{Input: 5, Output: 2}}, func(t *testing.T, f []string) {
			want := []string{"event messageStart ", "event contentBlockDelta ", "event contentBlockDelta ", "event contentBlockStop ", "event messageStop ", "event metadata "}
			if len(f) != len(want) {
				t.Fatalf("%q", f)
			}
			for i := range want {
				if !strings.HasPrefix(f[i], want[i]) || !strings.Contains(f[i], `"p":"`) {
					t.Errorf("frame %d: %s", i, f[i])
				}
			}
			if !strings.Contains(f[1], `"delta":{"text":"a "}`) || !strings.Contains(f[4], `"stopReason":"end_turn"`) ||
				!strings.Contains(f[5], `"inputTokens":5`) {
				t.Errorf("%q", f)
			}
		}},
		{"cut after 2 chunks: no messageStop", Response{Text: text, CutAfterChunks: intp(2)}, func(t *testing.T, f []string) {
			if len(f) != 3 || strings.Contains(strings.Join(f, ""), "messageStop") {
				t.Errorf("%q", f)
			}
		}},
		{"a malformed frame", Response{Text: text, MalformedChunk: intp(2)}, func(t *testing.T, f []string) {
			payload := f[2][len("event contentBlockDelta "):]
			if len(f) != 8 || json.Valid([]byte(payload)) {
				t.Errorf("%q", f)
			}
		}},
		{"an exception first", Response{Text: text, StreamError: json.RawMessage(`{"__type":"ThrottlingException","message":"Too many requests, please wait before trying again."}`)},
			func(t *testing.T, f []string) {
				if len(f) != 2 || f[1] != `exception throttlingException {"__type":"ThrottlingException","message":"Too many requests, please wait before trying again."}` {
					t.Errorf("%q", f)
				}
			}},
		{"an exception after 2 chunks, by a namespaced name", Response{Text: text, StreamErrorAfterChunks: intp(2),
			StreamError: json.RawMessage(`{"__type":"com.amazon.bedrock#ModelStreamErrorException","message":"boom","originalStatusCode":529}`)},
			func(t *testing.T, f []string) {
				if len(f) != 4 || !strings.HasPrefix(f[3], "exception modelStreamErrorException ") {
					t.Errorf("%q", f)
				}
			}},
		{"an exception without a name", Response{Text: text, StreamError: json.RawMessage(`{"message":"boom"}`)},
			func(t *testing.T, f []string) {
				if len(f) != 2 || !strings.HasPrefix(f[1], "exception internalServerException ") {
					t.Errorf("%q", f)
				}
			}},
		{"empty", Response{Empty: true}, func(t *testing.T, f []string) {
			if len(f) != 0 {
				t.Errorf("%q", f)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fp := bedrockFake(t, []Rule{{Respond: []Response{c.resp}}})
			resp, body := post(t, fp.URL()+"/p/bedrock/model/"+strings.ReplaceAll(bedrockModel, ":", "%3A")+"/converse-stream", converseHi, sigV4("bedrock"))
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/vnd.amazon.eventstream" {
				t.Fatalf("%d %v", resp.StatusCode, resp.Header)
			}
			c.check(t, frames(t, []byte(body)))
		})
	}
}

func TestBedrockPathsAndCredentials(t *testing.T) {
	fp := bedrockFake(t, nil)
	fp.AddCredential("ABSK-api-key", "p:key")
	arn := "arn:aws:bedrock:eu-west-3:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-5-20250929-v1:0"
	for _, c := range []struct {
		name, path string
		headers    map[string]string
		status     int
		errorType  string
		provider   string
		model      string
		profile    string
	}{
		{"SigV4, the model id escaped", "/p/aws/model/" + strings.ReplaceAll(bedrockModel, ":", "%3A") + "/converse", sigV4("bedrock"), 200, "", "aws", bedrockModel, "p:aws"},
		{"an ARN, its slash escaped, without /p/", "/model/" + strings.NewReplacer(":", "%3A", "/", "%2F").Replace(arn) + "/converse", sigV4("bedrock"), 200, "", "bedrock", arn, "p:aws"},
		{"an API key", "/p/aws/model/m/converse", map[string]string{"Authorization": "Bearer ABSK-api-key"}, 200, "", "aws", "m", "p:key"},
		{"no credential", "/p/aws/model/m/converse", nil, 403, "MissingAuthenticationTokenException", "", "", ""},
		{"scoped to another service", "/p/aws/model/m/converse", sigV4("s3"), 403, "InvalidSignatureException", "", "", ""},
		{"a scope cut short", "/p/aws/model/m/converse", map[string]string{"Authorization": "AWS4-HMAC-SHA256 Credential=" + bedrockKeyID + "/20250101, Signature=0"},
			403, "IncompleteSignatureException", "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(fp.Calls())
			resp, body := post(t, fp.URL()+c.path, converseHi, c.headers)
			if resp.StatusCode != c.status {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			calls := fp.Calls()
			if c.status != 200 {
				var e struct {
					Message string `json:"message"`
				}
				if !strings.HasPrefix(resp.Header.Get("x-amzn-ErrorType"), c.errorType+":") || json.Unmarshal([]byte(body), &e) != nil || e.Message == "" || len(calls) != before {
					t.Errorf("%v %s (%d calls)", resp.Header, body, len(calls)-before)
				}
				return
			}
			if last := calls[len(calls)-1]; last.Provider != c.provider || last.Model != c.model || last.Profile != c.profile || last.Stream {
				t.Errorf("%+v", last)
			}
		})
	}
	// Another path is not Converse's.
	if resp, _ := post(t, fp.URL()+"/p/aws/model/m/invoke", converseHi, sigV4("bedrock")); resp.StatusCode != 404 {
		t.Errorf("invoke: %d", resp.StatusCode)
	}
}

func TestBedrockStatusesReachTheSDK(t *testing.T) {
	fp := bedrockFake(t, []Rule{{Respond: []Response{{Status: 429,
		Headers: map[string]string{"x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"},
		Body:    `{"message":"Too many requests, please wait before trying again."}`}}}})
	_, err := bedrockClient(fp).ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{ModelId: aws.String(bedrockModel), Messages: bedrockMessages})
	var te *types.ThrottlingException
	if !errors.As(err, &te) || te.ErrorMessage() != "Too many requests, please wait before trying again." {
		t.Errorf("%v", err)
	}
}

func TestBedrockPrefill(t *testing.T) {
	prefilled := `{"messages":[{"role":"user","content":[{"text":"say it"}]},{"role":"assistant","content":[{"text":"The quick brown"}]}]}`
	fp := bedrockFake(t, []Rule{{Match: Match{Model: "honours"}, Respond: []Response{{Text: foxText, Prefill: "honour"}}},
		{Match: Match{Model: "rejects"}, Respond: []Response{{Text: foxText, Prefill: "reject"}}}})
	resp, body := post(t, fp.URL()+"/p/aws/model/honours/converse", prefilled, sigV4("bedrock"))
	var whole struct {
		Output struct {
			Message struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"message"`
		} `json:"output"`
	}
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &whole) != nil || len(whole.Output.Message.Content) != 1 ||
		whole.Output.Message.Content[0].Text != " fox jumps over the lazy dog." || fp.Calls()[0].Prefill != "honoured" {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
	resp, body = post(t, fp.URL()+"/p/aws/model/rejects/converse-stream", prefilled, sigV4("bedrock"))
	if resp.StatusCode != 400 || !strings.HasPrefix(resp.Header.Get("x-amzn-ErrorType"), "ValidationException:") || body != PrefillRejectionBedrock ||
		fp.Calls()[1].Prefill != "rejected" || fp.Calls()[1].Outcome != "prefill rejected" {
		t.Errorf("%d %v %s", resp.StatusCode, resp.Header, body)
	}
}
