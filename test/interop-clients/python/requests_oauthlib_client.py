# Drives SPEC's three grants with Debian's requests-oauthlib, configured as its documentation shows; prints JSON lines.
# Usage: python3 requests_oauthlib_client.py code|credentials, with CLIENT_ID, CLIENT_SECRET, AUTHORIZE_URL,
# TOKEN_URL, REDIRECT_URI and API_URL in the environment. In code mode it prints {"authorization_url"}, then
# reads the callback URL the browser was sent to from stdin. The last line is the result the test checks.
import sys
import time

from oauthlib.oauth2 import BackendApplicationClient, OAuth2Error
from requests.auth import HTTPBasicAuth
from requests_oauthlib import OAuth2Session
from script_io import ENV, api, attempt, emit

def code_flow():
    session = OAuth2Session(ENV['CLIENT_ID'], redirect_uri=ENV['REDIRECT_URI'])
    authorization_url, state = session.authorization_url(ENV['AUTHORIZE_URL'])
    emit({'authorization_url': authorization_url})
    callback = sys.stdin.readline().strip()
    # Default: with client_secret given, the id and secret go in an Authorization: Basic header.
    token = session.fetch_token(ENV['TOKEN_URL'], authorization_response=callback, client_secret=ENV['CLIENT_SECRET'])
    result = {'token_fields': sorted(token.keys()), 'state_checked': state, 'api': api(session)}
    original = token['refresh_token']

    # The documented automatic refresh: auto_refresh_kwargs put the id and secret in the body (client_secret_post).
    updates = []
    expired = dict(token, expires_at=time.time() - 60)
    auto = OAuth2Session(ENV['CLIENT_ID'], token=expired, auto_refresh_url=ENV['TOKEN_URL'],
                         auto_refresh_kwargs={'client_id': ENV['CLIENT_ID'], 'client_secret': ENV['CLIENT_SECRET']},
                         token_updater=updates.append)

    def auto_refresh():
        called = api(auto)
        return {'api': called, 'updated': len(updates), 'new_access_token': bool(updates) and updates[0]['access_token'] != token['access_token'],
                'kept_refresh_token': bool(updates) and updates[0].get('refresh_token') == original}
    result['auto_refresh'] = attempt(auto_refresh, OAuth2Error)

    # An explicit refresh with Basic authentication.
    def basic_refresh():
        refreshed = session.refresh_token(ENV['TOKEN_URL'], auth=HTTPBasicAuth(ENV['CLIENT_ID'], ENV['CLIENT_SECRET']))
        return {'api': api(session), 'kept_refresh_token': refreshed.get('refresh_token') == original,
                'new_access_token': refreshed['access_token'] != token['access_token']}
    result['basic_refresh'] = attempt(basic_refresh, OAuth2Error)

    # refresh_token() with no auth and no kwargs authenticates nobody: a confidential client must pass one of the above.
    result['unauthenticated_refresh'] = attempt(lambda: {'token_fields': sorted(session.refresh_token(ENV['TOKEN_URL']).keys())}, OAuth2Error)
    return result


def credentials_flow():
    session = OAuth2Session(client=BackendApplicationClient(client_id=ENV['CLIENT_ID']))
    token = session.fetch_token(ENV['TOKEN_URL'], client_secret=ENV['CLIENT_SECRET'])
    return {'token_fields': sorted(token.keys()), 'api': api(session)}


emit(code_flow() if sys.argv[1] == 'code' else credentials_flow())
