package policy

import "github.com/batonhq/baton/provider"

// parsed is a failure as the classifier gets it in production: its message and body read once by
// the provider layer's parser (provider.Error.Parse), then mapped field for field as
// activities.FailureOf maps them. The tables below give failures as they came (a message that
// embeds a JSON error body, a body, a gateway's HTML page) and classify them through it.
// (A test may import provider: provider imports nothing of ours, imports_test.go.)
func parsed(f Failure) Failure {
	e := (&provider.Error{Status: f.Status, Code: f.Code, Type: f.Type, Message: f.Message, BodyPreview: f.Body}).Parse(nil)
	f.Code, f.Type, f.Message, f.Wrapped = e.Code, e.Type, e.Message, e.Wrapped
	f.Detail, f.Body, f.Page, f.DetailPage = e.Detail, e.BodyPreview, e.Page, e.DetailPage
	f.Retry = RetryInfo(e.Retry)
	return f
}

// classifyAsCame classifies a failure as it came, through the provider layer's parser.
func classifyAsCame(f Failure) Reason { return Classify(parsed(f)) }
