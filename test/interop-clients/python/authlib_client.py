# Drives SPEC's three grants with Debian's Authlib (requests integration) in its default configuration; prints JSON lines.
# Usage: python3 authlib_client.py code|credentials, with CLIENT_ID, CLIENT_SECRET, AUTHORIZE_URL, TOKEN_URL,
# REDIRECT_URI and API_URL in the environment. In code mode it prints {"authorization_url"}, then reads the
# callback URL the browser was sent to from stdin. The last line is the result the test checks.
import sys
import time

from authlib.integrations.base_client import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from script_io import ENV, api, attempt, emit

def code_flow():
    # Default token_endpoint_auth_method: client_secret_basic. token_endpoint enables the automatic refresh.
    session = OAuth2Session(ENV['CLIENT_ID'], ENV['CLIENT_SECRET'], redirect_uri=ENV['REDIRECT_URI'], token_endpoint=ENV['TOKEN_URL'])
    authorization_url, _state = session.create_authorization_url(ENV['AUTHORIZE_URL'])
    emit({'authorization_url': authorization_url})
    callback = sys.stdin.readline().strip()
    token = dict(session.fetch_token(ENV['TOKEN_URL'], authorization_response=callback))
    result = {'token_fields': sorted(token.keys()), 'api': api(session)}
    original = token['refresh_token']

    # An expired token is refreshed before the next request, with the session's client authentication.
    def auto_refresh():
        session.token = dict(token, expires_at=int(time.time()) - 60)
        called = api(session)
        return {'api': called, 'new_access_token': session.token['access_token'] != token['access_token'],
                'kept_refresh_token': session.token.get('refresh_token') == original}
    result['auto_refresh'] = attempt(auto_refresh, OAuthError)

    def explicit_refresh():
        refreshed = session.refresh_token(ENV['TOKEN_URL'])
        return {'api': api(session), 'kept_refresh_token': refreshed.get('refresh_token') == original}
    result['explicit_refresh'] = attempt(explicit_refresh, OAuthError)
    return result


def credentials_flow():
    session = OAuth2Session(ENV['CLIENT_ID'], ENV['CLIENT_SECRET'])
    token = session.fetch_token(ENV['TOKEN_URL'], grant_type='client_credentials')
    return {'token_fields': sorted(token.keys()), 'api': api(session)}


emit(code_flow() if sys.argv[1] == 'code' else credentials_flow())
