package provider

import (
	"context"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

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

	stream := client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	var text strings.Builder
	var resp Response
	stopped := false
	for stream.Next() {
		resp.Chunks++
		onChunk()
		switch ev := stream.Current().AsAny().(type) {
		case anthropic.MessageStartEvent:
			resp.Usage.InputTokens = ev.Message.Usage.InputTokens
		case anthropic.ContentBlockDeltaEvent:
			if d, ok := ev.Delta.AsAny().(anthropic.TextDelta); ok {
				text.WriteString(d.Text)
			}
		case anthropic.MessageDeltaEvent:
			resp.FinishReason = string(ev.Delta.StopReason)
			resp.Usage.OutputTokens = ev.Usage.OutputTokens
		case anthropic.MessageStopEvent:
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
