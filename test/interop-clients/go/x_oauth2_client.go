// Drives SPEC's three grants with Debian's golang.org/x/oauth2 in its default configuration; prints JSON lines.
// Usage: x_oauth2_client code|credentials, with CLIENT_ID, CLIENT_SECRET, AUTHORIZE_URL, TOKEN_URL,
// REDIRECT_URI and API_URL in the environment. In code mode it prints {"authorization_url"}, then reads the
// callback URL the browser was sent to from stdin. The last line is the result the test checks.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

type apiResult struct {
	Status int                    `json:"status"`
	Body   map[string]interface{} `json:"body"`
}

func emit(value interface{}) {
	out, _ := json.Marshal(value)
	fmt.Println(string(out))
}

func fail(step string, err error) {
	emit(map[string]string{"failed": step, "error": err.Error()})
	os.Exit(1)
}

func callAPI(client *http.Client) apiResult {
	res, err := client.Get(os.Getenv("API_URL"))
	if err != nil {
		fail("api", err)
	}
	defer res.Body.Close()
	result := apiResult{Status: res.StatusCode}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		_ = json.NewDecoder(res.Body).Decode(&result.Body)
	}
	return result
}

// expired is a copy of the token that the TokenSource will consider stale, so that it refreshes now.
func expired(token *oauth2.Token) *oauth2.Token {
	stale := *token
	stale.Expiry = time.Now().Add(-time.Minute)
	return &stale
}

func codeFlow(ctx context.Context) map[string]interface{} {
	// Endpoint.AuthStyle left zero: AuthStyleAutoDetect (Basic first, then the body).
	conf := &oauth2.Config{
		ClientID:     os.Getenv("CLIENT_ID"),
		ClientSecret: os.Getenv("CLIENT_SECRET"),
		Endpoint:     oauth2.Endpoint{AuthURL: os.Getenv("AUTHORIZE_URL"), TokenURL: os.Getenv("TOKEN_URL")},
		RedirectURL:  os.Getenv("REDIRECT_URI"),
	}
	state := "x-oauth2-state"
	emit(map[string]string{"authorization_url": conf.AuthCodeURL(state)})
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil {
		fail("read callback", err)
	}
	callback, err := url.Parse(strings.TrimSpace(line))
	if err != nil {
		fail("parse callback", err)
	}
	if callback.Query().Get("state") != state {
		fail("state", fmt.Errorf("state mismatch: %q", callback.Query().Get("state")))
	}
	token, err := conf.Exchange(ctx, callback.Query().Get("code"))
	if err != nil {
		fail("exchange", err)
	}
	result := map[string]interface{}{
		"token_type":        token.TokenType,
		"has_refresh_token": token.RefreshToken != "",
		"expires_in_future": token.Expiry.After(time.Now()),
		"api":               callAPI(conf.Client(ctx, token)),
	}

	// A TokenSource holding a stale token refreshes it; the response has no refresh_token, and x/oauth2
	// copies the one it sent into the new token.
	source := conf.TokenSource(ctx, expired(token))
	refreshed, err := source.Token()
	if err != nil {
		fail("refresh", err)
	}
	result["refresh"] = map[string]interface{}{
		"new_access_token":   refreshed.AccessToken != token.AccessToken,
		"kept_refresh_token": refreshed.RefreshToken == token.RefreshToken,
		"api":                callAPI(oauth2.NewClient(ctx, source)),
	}
	again, err := conf.TokenSource(ctx, expired(refreshed)).Token()
	if err != nil {
		fail("second refresh", err)
	}
	result["second_refresh"] = map[string]interface{}{
		"new_access_token":   again.AccessToken != refreshed.AccessToken,
		"kept_refresh_token": again.RefreshToken == token.RefreshToken,
		"api":                callAPI(conf.Client(ctx, again)),
	}
	return result
}

func credentialsFlow(ctx context.Context) map[string]interface{} {
	conf := &clientcredentials.Config{
		ClientID:     os.Getenv("CLIENT_ID"),
		ClientSecret: os.Getenv("CLIENT_SECRET"),
		TokenURL:     os.Getenv("TOKEN_URL"),
	}
	token, err := conf.Token(ctx)
	if err != nil {
		fail("token", err)
	}
	return map[string]interface{}{
		"token_type":        token.TokenType,
		"has_refresh_token": token.RefreshToken != "",
		"api":               callAPI(conf.Client(ctx)),
	}
}

func main() {
	ctx := context.Background()
	if len(os.Args) > 1 && os.Args[1] == "code" {
		emit(codeFlow(ctx))
	} else {
		emit(credentialsFlow(ctx))
	}
}
