# Drives SPEC's three grants with Debian's Ruby oauth2 gem (1.4, on Faraday) as its README shows; prints JSON lines.
# Usage: ruby oauth2_client.rb code|credentials, with CLIENT_ID, CLIENT_SECRET, SITE ({auth_url} or
# {legacy_auth_url}), REDIRECT_URI and API_URL in the environment; AUTH_SCHEME=basic_auth switches from the gem's
# default (:request_body, the secret in the form) to Basic. In code mode it prints {"authorization_url"}, then reads
# the callback URL the browser was sent to from stdin. The last line is the result the test checks.
require 'json'
require 'uri'
require 'oauth2'

ENV_ = ENV

def emit(value)
  $stdout.puts(JSON.generate(value))
  $stdout.flush
end

# A client as a SPEC reader configures it. The paths are relative ('oauth2/token', not '/oauth2/token'): Faraday
# joins an absolute path to the site's host and drops its path, so '/oauth2/token' on {legacy_auth_url} would
# call the main address.
def client(secret = ENV_['CLIENT_SECRET'], id: ENV_['CLIENT_ID'], site: ENV_['SITE'], token_url: 'oauth2/token')
  options = { site: site, authorize_url: 'oauth2/authorize', token_url: token_url, redirect_uri: ENV_['REDIRECT_URI'] }
  options[:auth_scheme] = ENV_['AUTH_SCHEME'].to_sym unless ENV_['AUTH_SCHEME'].to_s.empty?
  OAuth2::Client.new(id, secret, options)
end

# Runs one step; an OAuth2::Error is recorded by its RFC 6749 error code, and whether it carried the description.
def attempt
  yield
rescue OAuth2::Error => e
  { 'error' => e.code, 'status' => e.response.status, 'has_description' => !e.description.to_s.empty? }
end

# The protected API called the gem's way (AccessToken#get puts the token in Authorization: Bearer).
def api(token)
  res = token.get(ENV_['API_URL'], raise_errors: false)
  { 'status' => res.status, 'body' => res.parsed.is_a?(Hash) ? res.parsed : nil }
end

def token_fields(token)
  (token.params.keys + %w[access_token] + (token.refresh_token ? %w[refresh_token] : []) + (token.expires_in ? %w[expires_in] : [])).sort
end

def code_flow
  oauth = client
  emit('authorization_url' => oauth.auth_code.authorize_url(state: 'ruby-state'))
  callback = URI.decode_www_form(URI($stdin.gets.strip).query).to_h
  token = oauth.auth_code.get_token(callback['code'])
  result = { 'state' => callback['state'], 'token_fields' => token_fields(token), 'api' => api(token) }

  # refresh! sends the gem's client authentication and copies the old refresh token over when none comes back.
  refreshed = token.refresh!
  again = refreshed.refresh!
  result['refresh'] = { 'new_access_token' => refreshed.token != token.token, 'kept_refresh_token' => refreshed.refresh_token == token.refresh_token,
                        'api' => api(refreshed), 'second_refresh_api' => api(again) }

  # The gem has no revocation call: its client's request method with its own authentication (RFC 7009).
  params = OAuth2::Authenticator.new(oauth.id, oauth.secret, oauth.options[:auth_scheme]).apply('token' => token.refresh_token)
  headers = { 'Content-Type' => 'application/x-www-form-urlencoded' }.merge(params.delete(:headers) || {})
  revoked = oauth.request(:post, 'oauth2/revoke', body: params, headers: headers)
  result['revoke'] = { 'status' => revoked.status, 'refresh' => attempt { token.refresh! }, 'api' => api(again) }
  # Last: a replayed code revokes what it issued (RFC 6749 §4.1.2).
  result['replayed_code'] = attempt { oauth.auth_code.get_token(callback['code']) }
  result['unknown_code'] = attempt { oauth.auth_code.get_token('not-a-code') }
  result
end

def credentials_flow
  token = client.client_credentials.get_token
  result = { 'token_fields' => token_fields(token), 'api' => api(token),
             'wrong_secret' => attempt { client("#{ENV_['CLIENT_SECRET']}x").client_credentials.get_token } }
  # More integrations in this one process (Ruby starts slowly): EXTRA_CLIENTS is a JSON array of
  # {label, client_id, client_secret, site?, token_url?}; each label gets the API call's result or the error.
  JSON.parse(ENV_.fetch('EXTRA_CLIENTS', '[]')).each do |extra|
    other = client(extra['client_secret'], id: extra['client_id'], site: extra['site'] || ENV_['SITE'], token_url: extra['token_url'] || 'oauth2/token')
    result[extra['label']] = attempt { { 'api' => api(other.client_credentials.get_token) } }
  end
  result
end

emit(ARGV[0] == 'code' ? code_flow : credentials_flow)
