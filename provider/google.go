package provider

import (
	"context"
	"errors"
	"net/http"

	_ "golang.org/x/oauth2/google" // the adapter to come
	_ "google.golang.org/genai"    // the adapter to come
)

// completeGemini is not written yet (issue 28).
func completeGemini(ctx context.Context, req Request, hc *http.Client, secret string, clk *clock, em *emitter) (Response, error) {
	return Response{}, errors.New("google: not written yet")
}
