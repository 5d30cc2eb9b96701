package main

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// runServe is `baton serve`: an OpenAI-compatible endpoint in front of ReplyWorkflow.
func runServe(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var tf temporalFlags
	tf.register(fs)
	listen := fs.String("listen", "127.0.0.1:8080", "address to listen on")
	configPath := fs.String("config", os.Getenv("BATON_CONFIG"), "OpenClaw-shaped config, for GET /v1/models (env BATON_CONFIG)")
	timeout := fs.Duration("timeout", 10*time.Minute, "the longest a request waits for its reply")
	set, code, ok := parseFlags(fs, args, errOut)
	if !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(errOut, "baton serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if err := tf.validate(set); err != nil {
		fmt.Fprintf(errOut, "baton serve: %v\n", err)
		return exitUsage
	}
	token := os.Getenv("BATON_SERVE_TOKEN")
	if err := checkServeAuth(*listen, token); err != nil {
		fmt.Fprintf(errOut, "baton serve: %v\n", err)
		return exitUsage
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		fmt.Fprintf(errOut, "baton serve: --config / BATON_CONFIG: %v\n", err)
		return exitUsage
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	c, err := tf.dial(dctx)
	cancel()
	if err != nil {
		fmt.Fprintf(errOut, "baton serve: %v\n", err)
		return exitFailure
	}
	defer c.Close()
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(errOut, "baton serve: --listen %s: %v\n", *listen, err)
		return exitFailure
	}
	srv := &http.Server{Handler: &server{client: c, taskQueue: tf.TaskQueue, token: token, config: cfg, timeout: *timeout},
		ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "baton serve: OpenAI-compatible endpoint on http://%s/v1 (task queue %s)\n", l.Addr(), tf.TaskQueue)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(errOut, "baton serve: %v\n", err)
		return exitFailure
	}
	return 0
}

// checkServeAuth requires BATON_SERVE_TOKEN when the endpoint is reachable from other hosts.
func checkServeAuth(listen, token string) error {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("--listen: %q is not host:port", listen)
	}
	if token != "" || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--listen %s is not a loopback address: set BATON_SERVE_TOKEN, which clients then send as a bearer token", listen)
}

type server struct {
	client    client.Client
	taskQueue string
	token     string
	config    *policy.Config
	timeout   time.Duration
}

// apiError is an OpenAI-shaped error.
type apiError struct {
	status     int
	Message    string `json:"message"`
	Type       string `json:"type"`
	Param      any    `json:"param"`
	Code       any    `json:"code"`
	retryAfter int
}

func badRequest(param, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...), Type: "invalid_request_error", Param: param}
}

func writeError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]*apiError{"error": e})
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.token != "" {
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) != 1 {
			writeError(w, &apiError{status: http.StatusUnauthorized, Message: "missing or wrong bearer token", Type: "invalid_request_error", Code: "invalid_api_key"})
			return
		}
	}
	switch {
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		s.models(w)
	case r.URL.Path == "/v1/chat/completions" && r.Method == http.MethodPost:
		s.chat(w, r)
	case r.URL.Path == "/v1/models" || r.URL.Path == "/v1/chat/completions":
		writeError(w, &apiError{status: http.StatusMethodNotAllowed, Message: r.Method + " is not allowed here", Type: "invalid_request_error"})
	default:
		writeError(w, &apiError{status: http.StatusNotFound, Message: "unknown path " + r.URL.Path + " (POST /v1/chat/completions, GET /v1/models)", Type: "invalid_request_error"})
	}
}

func (s *server) models(w http.ResponseWriter) {
	seen := map[string]bool{}
	var data []map[string]any
	add := func(id, owner string) {
		if id != "" && !seen[id] {
			seen[id] = true
			data = append(data, map[string]any{"id": id, "object": "model", "created": 0, "owned_by": owner})
		}
	}
	refs := append([]policy.ModelRef{s.config.Model.Primary}, s.config.Model.Fallbacks...)
	for _, a := range s.config.Agents {
		if a.Model != nil {
			refs = append(append(refs, a.Model.Primary), a.Model.Fallbacks...)
		}
	}
	for _, r := range refs {
		if !r.IsZero() {
			add(r.String(), r.Provider)
		}
	}
	add("agent:main", "baton")
	for _, a := range s.config.Agents {
		add("agent:"+a.ID, "baton")
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

// chatRequest is the part of an OpenAI chat completion request baton reads; other fields
// (temperature, max_tokens, …) are accepted and ignored.
type chatRequest struct {
	Model         json.RawMessage `json:"model"`
	Messages      json.RawMessage `json:"messages"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	User      string    `json:"user"`
	Fallbacks *[]string `json:"fallbacks"`
}

// decodeChat turns a request body into a reply request, naming the field that is wrong.
func decodeChat(body []byte, session string) (policy.ReplyRequest, bool, bool, *apiError) {
	var cr chatRequest
	if err := json.Unmarshal(body, &cr); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return policy.ReplyRequest{}, false, false, badRequest(te.Field, "%s: want %s", te.Field, te.Type)
		}
		return policy.ReplyRequest{}, false, false, badRequest("", "the body is not valid JSON: %v", err)
	}
	var model string
	if len(cr.Model) == 0 || json.Unmarshal(cr.Model, &model) != nil || strings.TrimSpace(model) == "" {
		return policy.ReplyRequest{}, false, false, badRequest("model", "model: want \"provider/model\" or \"agent:<id>\"")
	}
	var raw []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if len(cr.Messages) == 0 || json.Unmarshal(cr.Messages, &raw) != nil || len(raw) == 0 {
		return policy.ReplyRequest{}, false, false, badRequest("messages", "messages: want a non-empty array of {role, content}")
	}
	req := policy.ReplyRequest{Agent: "main", Session: session}
	if req.Session == "" {
		req.Session = cr.User
	}
	for i, m := range raw {
		field := fmt.Sprintf("messages[%d]", i)
		role := m.Role
		switch role {
		case "system", "user", "assistant":
		case "developer":
			role = "system"
		default:
			return policy.ReplyRequest{}, false, false, badRequest(field+".role", "%s.role: %q is not system, developer, user or assistant", field, m.Role)
		}
		text, err := contentText(m.Content)
		if err != nil {
			return policy.ReplyRequest{}, false, false, badRequest(field+".content", "%s.content: %v", field, err)
		}
		req.Messages = append(req.Messages, policy.ChatMessage{Role: role, Content: text})
	}
	req.Message = req.Messages[len(req.Messages)-1].Content
	if agent, ok := strings.CutPrefix(model, "agent:"); ok {
		if agent == "" {
			return policy.ReplyRequest{}, false, false, badRequest("model", "model: \"agent:\" names no agent")
		}
		req.Agent = agent
		if cr.Fallbacks != nil {
			return policy.ReplyRequest{}, false, false, badRequest("fallbacks", "fallbacks: goes with a provider/model, not an agent")
		}
	} else {
		// A provider/model is a job primary: the configured fallbacks, unless fallbacks is given.
		ref, err := policy.ParseModelRef(model)
		if err != nil {
			return policy.ReplyRequest{}, false, false, badRequest("model", "model: %v (or \"agent:<id>\")", err)
		}
		cp := &policy.CronPayload{Model: ref}
		if cr.Fallbacks != nil {
			cp.HasFallbacks, cp.Fallbacks = true, []policy.ModelRef{}
			for i, f := range *cr.Fallbacks {
				fr, err := policy.ParseModelRef(f)
				if err != nil {
					return policy.ReplyRequest{}, false, false, badRequest(fmt.Sprintf("fallbacks[%d]", i), "fallbacks[%d]: %v", i, err)
				}
				cp.Fallbacks = append(cp.Fallbacks, fr)
			}
		}
		req.Cron = cp
	}
	includeUsage := cr.StreamOptions != nil && cr.StreamOptions.IncludeUsage
	return req, cr.Stream, includeUsage, nil
}

// contentText reads a message's content: a string, or an array of {type: "text", text} parts.
func contentText(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("want a string or an array of text parts")
	}
	var b strings.Builder
	for i, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("part %d has type %q; only text parts are supported", i, p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

func (s *server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		writeError(w, badRequest("", "reading the body: %v", err))
		return
	}
	req, stream, includeUsage, apiErr := decodeChat(body, r.Header.Get("x-baton-session"))
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
	defer cancel()
	run, err := workflows.StartReply(ctx, s.client, s.taskQueue, req)
	if err != nil {
		writeError(w, &apiError{status: http.StatusServiceUnavailable, Message: "cannot start the reply: " + err.Error(), Type: "server_error"})
		return
	}
	w.Header().Set("x-baton-workflow-id", run.GetID())
	w.Header().Set("x-baton-run-id", run.GetRunID())
	var res policy.ReplyResult
	if err := run.Get(ctx, &res); err != nil {
		writeError(w, replyError(err, time.Now()))
		return
	}
	unsuccessful := 0
	for _, a := range res.Attempts {
		if a.Result == policy.ResultFailed || a.Result == policy.ResultSkipped {
			unsuccessful++
		}
	}
	w.Header().Set("x-baton-attempts", strconv.Itoa(len(res.Attempts)))
	if unsuccessful > 0 {
		w.Header().Set("x-baton-fallback-reason", string(policy.LastReason(res.Attempts)))
	}
	model := res.Served.Provider + "/" + res.Served.Model
	id := "chatcmpl-" + run.GetRunID() // a session's turns share the workflow ID (its lane)
	usage := map[string]int64{"prompt_tokens": res.Input, "completion_tokens": res.Output, "total_tokens": res.Input + res.Output}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]string{"role": "assistant", "content": res.Text}, "finish_reason": "stop"}},
			"usage":   usage})
		return
	}
	// The answer is complete before the first byte: a failure is an error response, never a cut stream.
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	var buf bytes.Buffer
	chunk := func(delta map[string]string, finish any, extra map[string]any) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		for k, v := range extra {
			c[k] = v
		}
		data, _ := json.Marshal(c)
		fmt.Fprintf(&buf, "data: %s\n\n", data)
	}
	chunk(map[string]string{"role": "assistant", "content": ""}, nil, nil)
	for _, piece := range splitText(res.Text, 64) {
		chunk(map[string]string{"content": piece}, nil, nil)
	}
	chunk(map[string]string{}, "stop", nil)
	if includeUsage {
		data, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
			"choices": []any{}, "usage": usage})
		fmt.Fprintf(&buf, "data: %s\n\n", data)
	}
	buf.WriteString("data: [DONE]\n\n")
	_, _ = w.Write(buf.Bytes())
}

// splitText cuts text into pieces of about n bytes on rune boundaries.
func splitText(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut < len(s) && (s[cut]&0xC0) == 0x80 {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// replyError maps a failed reply to an OpenAI-shaped error: 429 with Retry-After when every
// candidate was rate-limited, 400 for a prompt that does not fit, 502 otherwise.
func replyError(err error, now time.Time) *apiError {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "deadline exceeded") {
			return &apiError{status: http.StatusGatewayTimeout, Message: "no answer in time: " + err.Error(), Type: "server_error"}
		}
		return &apiError{status: http.StatusBadGateway, Message: err.Error(), Type: "server_error"}
	}
	switch appErr.Type() {
	case policy.ErrContextOverflow:
		return &apiError{status: http.StatusBadRequest, Message: appErr.Message(), Type: "invalid_request_error", Code: "context_length_exceeded"}
	case policy.ErrFormat, "BadRequest":
		return &apiError{status: http.StatusBadRequest, Message: appErr.Message(), Type: "invalid_request_error"}
	case policy.ErrFallbackSummary:
		var ex policy.Exhaustion
		_ = appErr.Details(&ex)
		allRate := len(ex.Attempts) > 0
		for _, a := range ex.Attempts {
			if (a.Result == policy.ResultFailed || a.Result == policy.ResultSkipped) && a.Reason != policy.ReasonRateLimit {
				allRate = false
			}
		}
		if allRate {
			e := &apiError{status: http.StatusTooManyRequests, Message: appErr.Message(), Type: "rate_limit_error", Code: "rate_limit_exceeded"}
			if ex.SoonestCooldownExpiry != nil {
				e.retryAfter = max(1, int(math.Ceil(ex.SoonestCooldownExpiry.Sub(now).Seconds())))
			}
			return e
		}
		return &apiError{status: http.StatusBadGateway, Message: appErr.Message(), Type: "server_error", Code: string(ex.Reason)}
	}
	return &apiError{status: http.StatusBadGateway, Message: appErr.Message(), Type: "server_error", Code: appErr.Type()}
}
