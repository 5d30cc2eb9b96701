package provider

import (
	"context"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// openAIChunk is the part of a chat.completion.chunk an answer needs.
type openAIChunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// completeOpenAI streams a Chat Completion (OpenAI or any compatible endpoint). The answer is
// final only at a finish reason or [DONE].
func completeOpenAI(ctx context.Context, req Request, hc *http.Client, secret string, onChunk func(), cap *capture) (Response, error) {
	client := openai.NewClient(
		option.WithBaseURL(req.BaseURL),
		option.WithAPIKey(secret),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // the workflow owns every retry
	)
	params := openai.ChatCompletionNewParams{
		Model:         req.Model,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		case "assistant":
			params.Messages = append(params.Messages, openai.AssistantMessage(m.Content))
		default:
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		}
	}
	if req.MaxTokens > 0 {
		params.MaxCompletionTokens = openai.Int(req.MaxTokens)
	}

	// The SDK builds, authenticates and sends the request and parses the SSE framing; each chunk is
	// decoded into the few fields an answer needs (the SDK's full chunk type costs several µs
	// per chunk in reflection).
	var raw *http.Response
	err := client.Post(ctx, "chat/completions", params, &raw,
		option.WithJSONSet("stream", true), option.WithHeader("Authorization", "Bearer "+secret))
	stream := ssestream.NewStream[openAIChunk](ssestream.NewDecoder(raw), err)
	defer stream.Close()
	var text strings.Builder
	var resp Response
	for stream.Next() {
		chunk := stream.Current()
		resp.Chunks++
		onChunk()
		if chunk.Usage != nil {
			resp.Usage = Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
		}
		for _, c := range chunk.Choices {
			text.WriteString(c.Delta.Content)
			if c.FinishReason != "" {
				resp.FinishReason = c.FinishReason
			}
		}
	}
	resp.Text = text.String()
	if err := stream.Err(); err != nil {
		return resp, err
	}
	if ctx.Err() != nil {
		return resp, ctx.Err()
	}
	cap.mu.Lock()
	sawDone := cap.sawDone
	cap.mu.Unlock()
	if resp.FinishReason == "" && !sawDone {
		if resp.Chunks == 0 {
			return resp, &Error{Stream: FaultEmpty, Message: "the provider answered with no content"}
		}
		return resp, &Error{Stream: FaultCut, Message: errCut.Error() + " (no finish reason, no [DONE])", Partial: true}
	}
	return resp, nil
}
