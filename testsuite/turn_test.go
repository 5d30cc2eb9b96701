package testsuite_test

import (
	"context"
	"testing"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
)

const imageCatalogConfig = `{agents: {defaults: {model: {primary: "local/llama", fallbacks: ["openai/gpt-5"]}, imageModel: {primary: "anthropic/claude-sonnet-4-5"}}},
  models: {providers: {local: {models: [{id: "llama", input: ["text"]}]}}}}`

func imageTurn(t *testing.T, w *testsuite.World, req workflows.ReplyRequest) workflows.ReplyRequest {
	t.Helper()
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 9000)...)
	turn := provider.Turn{Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{provider.TextPart("what is it?"),
		{Type: provider.PartImage, MediaType: "image/png", Data: png}}}}}
	req, err := workflows.WithTurn(context.Background(), w.Store, req, turn)
	if err != nil {
		t.Fatal(err)
	}
	if req.TurnRef == "" || req.Turn != nil || !req.CarriesImages {
		t.Fatalf("a 9 KB turn travels by reference: %+v", req)
	}
	return req
}

func TestATurnWithImagesSkipsTextOnlyCandidatesWithoutMovingTheSession(t *testing.T) {
	w := testsuite.NewWorld(t, imageCatalogConfig, threeKeys, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "openai"}, Respond: []fakeprovider.Response{{Text: "a black square"}}},
	})
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, w.Acts)

	_, res, err := reply(t, c, tq, imageTurn(t, w, workflows.ReplyRequest{Agent: "main", Session: "img-1"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "a black square" || res.Served.Provider != "openai" || len(res.Attempts) != 2 {
		t.Fatalf("served %+v %q attempts %+v", res.Served, res.Text, res.Attempts)
	}
	if a := res.Attempts[0]; a.Result != policy.ResultSkipped || a.Reason != policy.ReasonTextOnly || a.Model != "llama" || a.Error == "" {
		t.Errorf("the text-only primary: %+v", a)
	}
	if calls := w.Fake.Calls(); len(calls) != 1 || calls[0].Provider != "openai" {
		t.Errorf("calls %+v: the text-only model must not be called", calls)
	}
	sess, _ := w.Store.GetSession(context.Background(), "img-1")
	if sess.Model.ModelOverride != "" {
		t.Errorf("a candidate reached past text-only ones is no fallback: the session moved to %+v", sess.Model)
	}
}

func TestATurnWithImagesNoCandidateTakesGoesToTheImageChain(t *testing.T) {
	w := testsuite.NewWorld(t, imageCatalogConfig, threeKeys, []fakeprovider.Rule{
		{Match: fakeprovider.Match{Provider: "anthropic"}, Respond: []fakeprovider.Response{{Text: "a cat, says claude"}}},
	})
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, w.Acts)

	// A strict one-off text-only model: no candidate of its chain takes images.
	_, res, err := reply(t, c, tq, imageTurn(t, w, workflows.ReplyRequest{Agent: "main", Session: "img-2", Model: "local/llama"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "a cat, says claude" || res.Served.Model != "claude-sonnet-4-5" {
		t.Fatalf("served %+v %q", res.Served, res.Text)
	}
	sess, _ := w.Store.GetSession(context.Background(), "img-2")
	if sess.Model.ModelOverride != "" || sess.Model.AuthProfileOverride != "" {
		t.Errorf("the image chain writes no session state: %+v", sess.Model)
	}
}
