package provider

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/vertex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/genai"
)

// Vertex AI (vertex-ai): Google's models through genai's Vertex backend, with google.go's
// translation and stream; Anthropic's (a model id starting "claude") through anthropic.go's
// Messages translation and stream, posted to the model's streamRawPredict. What is Vertex AI's
// own: the endpoint (the region's, or the global one), the project, and the credential, an access
// token sent as a bearer: a service account's key traded for one at its token_uri, the
// application-default credentials' (ambient), or one given as is (token, oauth).
//
// Claude goes through the Anthropic client configured here rather than through the SDK's vertex
// package: that package's request rewrite applies only to a base URL without a path (a gateway's,
// or the fake provider's /p/{provider}, would reach Vertex AI unrewritten), and its
// WithCredentials panics when it cannot build an HTTP client of its own, which it builds on every
// call and never uses beside ours. The rewrite is the same: the model in the path, the body
// without "model" and with the package's "anthropic_version".

// vertexScope is the OAuth scope Vertex AI's calls need.
const vertexScope = "https://www.googleapis.com/auth/cloud-platform"

// vertexAPIVersion is the API version sent unless the provider names one (Google's models; the
// publisher endpoints of Anthropic's are v1's).
const vertexAPIVersion = "v1"

// vertexRegionRe is a Vertex AI location ("us-central1", "europe-west4", "global", "us").
var vertexRegionRe = regexp.MustCompile(`^[a-z][a-z0-9-]*[a-z0-9]$`)

// completeVertex streams an answer from a model on Vertex AI.
func completeVertex(ctx context.Context, req Request, hc *http.Client, clk *clock, em *emitter) (Response, error) {
	if req.Region == "" {
		return Response{}, vertexConfigError("no region: set models.providers.%s.region to the model's Vertex AI location (us-central1, global, …)", req.Provider)
	}
	if !vertexRegionRe.MatchString(req.Region) {
		return Response{}, vertexConfigError("region %q of provider %s is not a Vertex AI location", req.Region, req.Provider)
	}
	token, project, secrets, err := vertexToken(ctx, req)
	if err != nil {
		return Response{}, vertexScrub(err, secrets)
	}
	project = cmp.Or(req.Project, project)
	if project == "" {
		return Response{}, vertexConfigError("no project: set models.providers.%s.project, or use credentials that name theirs (a service account key's project_id)", req.Provider)
	}
	base := cmp.Or(req.BaseURL, vertexEndpoint(req.Region))
	version := cmp.Or(req.APIVersion, vertexAPIVersion)
	call := &googleCall{base: hc.Transport, bearer: token}
	secrets = append(secrets, token)
	if model, ok := vertexClaude(req.Model); ok {
		req.Model = model
		resp, err := vertexAnthropic(ctx, req, base, version, project, call, clk, em)
		return resp, vertexScrub(err, secrets)
	}
	cc := &genai.ClientConfig{Backend: genai.BackendVertexAI, Project: project, Location: req.Region,
		HTTPClient: &http.Client{Transport: call}, HTTPOptions: googleHTTPOptions(base, version)}
	resp, err := streamGemini(ctx, req, cc, call, clk, em)
	return resp, vertexScrub(err, secrets)
}

// vertexEndpoint is a region's endpoint: the global one, a multi-region's, or a region's.
func vertexEndpoint(region string) string {
	switch region {
	case "global":
		return "https://aiplatform.googleapis.com"
	case "us", "eu":
		return "https://aiplatform." + region + ".rep.googleapis.com"
	}
	return "https://" + region + "-aiplatform.googleapis.com"
}

// vertexClaude reports a model of Anthropic's, and its id as Vertex AI's path names it (without a
// publisher prefix).
func vertexClaude(model string) (string, bool) {
	id := strings.TrimPrefix(strings.TrimPrefix(model, "publishers/anthropic/models/"), "anthropic/")
	return id, strings.HasPrefix(id, "claude")
}

// vertexAnthropic streams a Claude answer: the Messages translation and stream (streamAnthropic)
// on the model's streamRawPredict.
func vertexAnthropic(ctx context.Context, req Request, base, version, project string, call *googleCall, clk *clock, em *emitter) (Response, error) {
	client := anthropic.NewClient(
		option.WithoutEnvironmentDefaults(), // no ANTHROPIC_API_KEY, base URL or profile of the environment on a Google call
		option.WithBaseURL(base),
		option.WithHTTPClient(&http.Client{Transport: call}), // the bearer goes with it
		option.WithMaxRetries(0),                             // the workflow owns every retry
	)
	path := fmt.Sprintf("%s/projects/%s/locations/%s/publishers/anthropic/models/%s:streamRawPredict",
		version, url.PathEscape(project), url.PathEscape(req.Region), url.PathEscape(req.Model))
	resp, err := streamAnthropic(ctx, req, client, path, []option.RequestOption{
		option.WithJSONDel("model"), option.WithJSONSet("anthropic_version", vertex.DefaultVersion)}, clk, em)
	if err != nil {
		if e := call.failure(); e != nil {
			return Response{}, e // Anthropic's error shape, or Google's for auth and quota
		}
	}
	return resp, err
}

// vertexConfigError is a provider that cannot call Vertex AI as configured: nothing but a
// person's fix helps, so it reads as auth_permanent (the profile is set aside, the provider
// skipped) rather than as a network failure to retry.
func vertexConfigError(format string, args ...any) *Error {
	return &Error{Code: googleAuthPermanent, Type: "configuration", Message: "vertex-ai: " + fmt.Sprintf(format, args...)}
}

// vertexToken is the access token a call goes with, the project the credential names ("" when
// none), and the secrets an error must not show.
func vertexToken(ctx context.Context, req Request) (token, project string, secrets []string, err error) {
	c := req.Credential
	switch c.Type {
	case "token", "oauth":
		if token = c.bearer(); token == "" {
			return "", "", nil, vertexConfigError("the %s credential holds no access token", c.Type)
		}
		return token, "", []string{token}, nil
	case CredentialServiceAccount:
		var key struct {
			ProjectID    string `json:"project_id"`
			PrivateKey   string `json:"private_key"`
			PrivateKeyID string `json:"private_key_id"`
		}
		if err := json.Unmarshal([]byte(c.ServiceAccount), &key); err != nil {
			return "", "", nil, vertexConfigError("the service account key is not JSON: %v", err)
		}
		secrets = append([]string{key.PrivateKeyID, key.PrivateKey}, strings.Split(key.PrivateKey, "\n")...) // and each line of the PEM
		conf, err := google.JWTConfigFromJSON([]byte(c.ServiceAccount), vertexScope)
		if err != nil {
			return "", "", secrets, vertexConfigError("the service account key cannot be read: %v", err)
		}
		token, _, err = vertexTokens.get(ctx, "service_account:"+vertexDigest(c.ServiceAccount), req.HTTPClient,
			func(ctx context.Context) (oauth2.TokenSource, string, error) {
				return conf.TokenSource(ctx), key.ProjectID, nil
			})
		if err != nil {
			return "", "", secrets, vertexTokenError(ctx, err, "the service account's token endpoint ("+conf.TokenURL+")")
		}
		return token, key.ProjectID, append(secrets, token), nil
	case CredentialAmbient:
		token, project, err = vertexTokens.get(ctx, "ambient", req.HTTPClient, func(ctx context.Context) (oauth2.TokenSource, string, error) {
			creds, err := google.FindDefaultCredentials(ctx, vertexScope)
			if err != nil {
				return nil, "", err
			}
			return creds.TokenSource, creds.ProjectID, nil
		})
		if err != nil {
			return "", "", nil, vertexTokenError(ctx, err, "the application-default credentials")
		}
		return token, project, []string{token}, nil
	}
	return "", "", nil, vertexConfigError("a %q credential cannot sign Vertex AI calls: use service_account, ambient or token", c.Type)
}

func vertexDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// vertexTokenError is a token that could not be had. A refusal (invalid_grant: a key deleted or
// disabled, an account gone) lasts until a person acts (auth_permanent); the token endpoint's own
// trouble (a 429, a 5xx) keeps its status; no answer at all is a network failure; anything else
// (no application-default credentials, a key that does not parse) is the configuration's.
func vertexTokenError(ctx context.Context, err error, from string) error {
	if ctx.Err() != nil {
		return err // the attempt's clocks: toError names which
	}
	msg := "vertex-ai: no access token from " + from
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code, desc := re.ErrorCode, re.ErrorDescription
		if code == "" { // the jwt package does not read Google's error body
			var body struct {
				Error       string `json:"error"`
				Description string `json:"error_description"`
			}
			_ = json.Unmarshal(re.Body, &body)
			code, desc = body.Error, body.Description
		}
		if code != "" {
			msg += ": " + code
		}
		if desc != "" {
			msg += " (" + desc + ")"
		}
		e := &Error{Message: msg}
		if re.Response != nil {
			if status := re.Response.StatusCode; status >= 400 && status < 500 && status != 429 {
				e.Code = CodeOAuthRefreshFailed
			} else {
				e.Status = status
			}
		}
		return e
	}
	// The oauth2 packages flatten a transport error into their message ("cannot fetch token").
	if text := err.Error(); strings.Contains(text, "cannot fetch token") {
		return &Error{Net: googleNetKind(text), Message: msg + ": " + text}
	}
	return vertexConfigError("no access token from %s: %v", from, err)
}

// googleNetKind is a network failure's kind by its words (for errors whose chain was lost).
func googleNetKind(text string) string {
	switch {
	case strings.Contains(text, "connection refused"):
		return "refused"
	case strings.Contains(text, "no such host"):
		return "dns"
	case strings.Contains(text, "timeout") || strings.Contains(text, "deadline exceeded"):
		return "timeout"
	case strings.Contains(text, "tls:") || strings.Contains(text, "x509:"):
		return "tls"
	case strings.Contains(text, "EOF"):
		return "eof"
	}
	return "reset"
}

// vertexScrub masks the credential's secrets in an error: toError masks only the bearer of the
// request's credential, which a service account's key and the token traded for it are not.
func vertexScrub(err error, secrets []string) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	for _, s := range secrets {
		if s = strings.TrimSpace(s); len(s) >= 8 {
			scrub(e, s)
		}
	}
	return err
}

// vertexTokens keeps the access tokens credentials were traded for, until shortly before they
// expire: an attempt does not trade a key again.
var vertexTokens = &vertexTokenCache{entries: map[string]vertexCachedToken{}}

// vertexTokenEarly is how long before its expiry a cached token is traded again (a stream may
// outlast the token it started with: a token is checked only when a call starts).
const vertexTokenEarly = time.Minute

// vertexTokenTimeout bounds a token request on the default client (the attempt's clocks bound it
// too).
const vertexTokenTimeout = 30 * time.Second

type vertexTokenCache struct {
	mu      sync.Mutex
	entries map[string]vertexCachedToken
}

type vertexCachedToken struct {
	token, project string
	expiry         time.Time
}

// get is the token cached under key, or one from the source that source makes (with the project
// the credential names), fetched through hc (nil: a default client; never the model call's, whose
// transport times and captures the model call), in ctx.
func (c *vertexTokenCache) get(ctx context.Context, key string, hc *http.Client, source func(context.Context) (oauth2.TokenSource, string, error)) (token, project string, err error) {
	now := time.Now()
	c.mu.Lock()
	if t, ok := c.entries[key]; ok && now.Before(t.expiry.Add(-vertexTokenEarly)) {
		c.mu.Unlock()
		return t.token, t.project, nil
	}
	c.mu.Unlock()
	base, timeout := http.DefaultTransport, vertexTokenTimeout
	if hc != nil {
		timeout = hc.Timeout
		if hc.Transport != nil {
			base = hc.Transport
		}
	}
	// The jwt package posts without a context: the transport gives it the attempt's.
	ctx = context.WithValue(ctx, oauth2.HTTPClient, &http.Client{Transport: vertexCtxTransport{ctx: ctx, base: base}, Timeout: timeout})
	ts, project, err := source(ctx)
	if err != nil {
		return "", "", err
	}
	tok, err := ts.Token()
	if err != nil {
		return "", "", err
	}
	if tok.AccessToken == "" {
		return "", "", errors.New("the token endpoint answered no access token")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, t := range c.entries {
		if !now.Before(t.expiry) {
			delete(c.entries, k)
		}
	}
	if !tok.Expiry.IsZero() {
		c.entries[key] = vertexCachedToken{token: tok.AccessToken, project: project, expiry: tok.Expiry}
	}
	return tok.AccessToken, project, nil
}

// vertexCtxTransport sends every request in ctx.
type vertexCtxTransport struct {
	ctx  context.Context
	base http.RoundTripper
}

func (t vertexCtxTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return t.base.RoundTrip(r.WithContext(t.ctx))
}
