package provider

import (
	"context"
	"errors"
	"net/http"

	_ "github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream" // the adapter to come
	_ "github.com/aws/aws-sdk-go-v2/config"                   // the adapter to come
	_ "github.com/aws/aws-sdk-go-v2/credentials"              // the adapter to come
	_ "github.com/aws/aws-sdk-go-v2/service/bedrockruntime"   // the adapter to come
)

// completeBedrock is not written yet (issue 28).
func completeBedrock(ctx context.Context, req Request, hc *http.Client, clk *clock, em *emitter) (Response, error) {
	return Response{}, errors.New("bedrock: not written yet")
}
