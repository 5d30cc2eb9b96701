package provider

import (
	"context"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
)

// anthropicEvent is the part of a Messages stream event an answer needs.
type anthropicEvent struct {
	Type    string `json:"type"`
	Message struct {
		Usage struct {
			InputTokens int64 `json:"input_tokens"`
		} `json:"usage"`
	} `json:"message"`
	Delta struct {
		Type       string `json:"type"`
		Text       string `json:"text"`
		StopReason string `json:"stop_reason"`
	} `json:"delta"`
	Usage struct {
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

// defaultMaxTokens is Anthropic's required max_tokens when the request names none.
const defaultMaxTokens = 4096

// completeAnthropic streams a Messages response. The answer is final only at message_stop.
func completeAnthropic(ctx context.Context, req Request, hc *http.Client, secret string, onChunk func()) (Response, error) {
	opts := []option.RequestOption{
		option.WithBaseURL(req.BaseURL),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // the workflow owns every retry
	}
	if req.Credential.Type == "oauth" || req.Credential.Type == "token" {
		opts = append(opts, option.WithAuthToken(secret))
	} else {
		opts = append(opts, option.WithAPIKey(secret))
	}
	client := anthropic.NewClient(opts...)
	params := anthropic.MessageNewParams{Model: anthropic.Model(req.Model), MaxTokens: req.MaxTokens}
	if params.MaxTokens <= 0 {
		params.MaxTokens = defaultMaxTokens
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			params.System = append(params.System, anthropic.TextBlockParam{Text: m.Content})
		case "assistant":
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(anthropic.NewTextBlock(m.Content)))
		default:
			params.Messages = append(params.Messages, anthropic.NewUserMessage(anthropic.NewTextBlock(m.Content)))
		}
	}

	// As for OpenAI: the SDK sends the request and parses SSE; events decode into a lean struct.
	var raw *http.Response
	err := client.Post(ctx, "v1/messages", params, &raw, option.WithJSONSet("stream", true))
	stream := ssestream.NewStream[anthropicEvent](ssestream.NewDecoder(raw), err)
	defer stream.Close()
	var text strings.Builder
	var resp Response
	stopped := false
	for stream.Next() {
		resp.Chunks++
		onChunk()
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			resp.Usage.InputTokens = ev.Message.Usage.InputTokens
		case "content_block_delta":
			if ev.Delta.Type == "text_delta" {
				text.WriteString(ev.Delta.Text)
			}
		case "message_delta":
			resp.FinishReason = ev.Delta.StopReason
			resp.Usage.OutputTokens = ev.Usage.OutputTokens
		case "message_stop":
			stopped = true
		}
	}
	resp.Text = text.String()
	if err := stream.Err(); err != nil {
		return resp, err
	}
	if ctx.Err() != nil {
		return resp, ctx.Err()
	}
	if !stopped {
		if resp.Chunks == 0 {
			return resp, &Error{Stream: FaultEmpty, Message: "the provider answered with no content"}
		}
		return resp, &Error{Stream: FaultCut, Message: errCut.Error() + " (no message_stop)", Partial: true}
	}
	return resp, nil
}
