package provider

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/oauth2"
)

// CodeOAuthRefreshFailed marks a failed token refresh; the classifier reads it as auth_permanent.
const CodeOAuthRefreshFailed = "oauth_refresh_failed"

// refreshSkew refreshes a little before expiry, so a token does not lapse mid-stream.
const refreshSkew = 30 * time.Second

// needsRefresh reports an OAuth credential that has expired (or is about to) and can be refreshed.
func needsRefresh(c Credential, tokenURL string, now time.Time) bool {
	return c.Type == "oauth" && c.Refresh != "" && tokenURL != "" && !c.Expires.IsZero() && !now.Before(c.Expires.Add(-refreshSkew))
}

// refresh exchanges the refresh token for a new access token at tokenURL.
func refresh(ctx context.Context, c Credential, tokenURL, clientID string, hc *http.Client) (Credential, error) {
	if hc != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
	}
	conf := &oauth2.Config{ClientID: clientID, Endpoint: oauth2.Endpoint{TokenURL: tokenURL, AuthStyle: oauth2.AuthStyleInParams}}
	tok, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: c.Refresh, Expiry: time.Unix(1, 0)}).Token()
	if err != nil {
		msg := "OAuth refresh failed"
		if re, ok := err.(*oauth2.RetrieveError); ok && re.ErrorCode != "" {
			msg += ": " + re.ErrorCode
		} else {
			msg += fmt.Sprintf(" at %s", tokenURL)
		}
		return c, (&Error{Code: CodeOAuthRefreshFailed, Message: msg}).Parse(nil)
	}
	c.Access = tok.AccessToken
	if tok.RefreshToken != "" {
		c.Refresh = tok.RefreshToken
	}
	c.Expires = tok.Expiry
	return c, nil
}
