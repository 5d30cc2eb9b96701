package activities

import (
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/store"
)

// CallTo is the part of a provider call the config and the profile decide: where it goes, how
// it authenticates, what the clouds' APIs need (region, project, api-version, the Azure
// deployment), and the provider's own headers and query. The caller adds the turn and the clocks.
func CallTo(cfg *policy.Config, ref policy.ModelRef, cred store.Credential) provider.Request {
	pc := cfg.Providers[ref.Provider]
	return provider.Request{
		Provider: ref.Provider, Model: ref.Model, API: pc.API, BaseURL: pc.BaseURL,
		Region: pc.Region, Project: pc.Project, APIVersion: pc.APIVersion, Headers: pc.Headers, Query: pc.Query,
		Credential: CredentialOf(cred),
		TokenURL:   pc.TokenURL, ClientID: pc.ClientID,
		Deployment: cfg.Deployment(ref),
	}
}

// CredentialOf is a stored profile's secret as the provider layer takes it.
func CredentialOf(c store.Credential) provider.Credential {
	return provider.Credential{Type: c.Type, Key: c.Key, Token: c.Token, Access: c.Access, Refresh: c.Refresh, Expires: c.Expires,
		AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken, ServiceAccount: c.ServiceAccount}
}
