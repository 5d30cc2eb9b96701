package provider

import (
	"encoding/json"
	"errors"
	"strings"

	oassestream "github.com/openai/openai-go/v3/packages/ssestream"
)

// errorBody is the error object of an OpenAI ({"error":{…}}) or Anthropic
// ({"type":"error","error":{…}}) body.
type errorBody struct {
	Message string
	Type    string
	Code    string
}

func parseBody(b []byte) (errorBody, bool) {
	var raw struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(b, &raw) != nil {
		return errorBody{}, false
	}
	out := errorBody{Message: raw.Message, Type: raw.Type, Code: rawCode(raw.Code)}
	if out.Type == "error" {
		out.Type = ""
	}
	if len(raw.Error) > 0 {
		var inner struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		if json.Unmarshal(raw.Error, &inner) == nil {
			out = errorBody{Message: inner.Message, Type: inner.Type, Code: rawCode(inner.Code)}
		} else {
			var s string
			if json.Unmarshal(raw.Error, &s) == nil {
				out.Message = s
			}
		}
	}
	return out, out.Message != "" || out.Type != "" || out.Code != ""
}

func rawCode(r json.RawMessage) string {
	if len(r) == 0 || string(r) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s
	}
	return strings.Trim(string(r), `"`)
}

func isStreamErrorEvent(err error) bool {
	var se *oassestream.StreamError
	return errors.As(err, &se) || strings.HasPrefix(err.Error(), "received error while streaming")
}

func streamErrorData(err error) []byte {
	var se *oassestream.StreamError
	if errors.As(err, &se) {
		return se.Event.Data
	}
	msg := strings.TrimPrefix(err.Error(), "received error while streaming: ")
	return []byte(msg)
}

func isJSONError(err error) bool {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return errors.As(err, &syntax) || errors.As(err, &typ) || strings.Contains(err.Error(), "invalid character")
}
