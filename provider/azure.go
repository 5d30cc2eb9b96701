package provider

import (
	"context"
	"errors"
	"net/http"
)

// completeAzure is not written yet (issue 28).
func completeAzure(ctx context.Context, req Request, hc *http.Client, secret string, clk *clock, em *emitter, cap *capture) (Response, error) {
	return Response{}, errors.New("azure: not written yet")
}
