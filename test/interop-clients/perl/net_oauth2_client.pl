# Drives SPEC's three grants with Debian's Net::OAuth2 (0.67) as its manual shows; prints JSON lines.
# Usage: perl net_oauth2_client.pl code|credentials, with CLIENT_ID, CLIENT_SECRET, SITE ({auth_url} or
# {legacy_auth_url}), REDIRECT_URI and API_URL in the environment; SECRETS_IN_PARAMS=0 switches from the default
# (the id and secret in the form) to Basic. In code mode it prints {"authorization_url"}, then reads the callback
# URL the browser was sent to from stdin. The last line is the result the test checks.
use strict;
use warnings;
use Encode ();
use JSON::PP ();
use URI ();
use Net::OAuth2::Profile::Password ();
use Net::OAuth2::Profile::WebServer ();

my $json = JSON::PP->new->canonical;
$| = 1;
sub emit { print $json->encode($_[0]), "\n" }

# The endpoints as full URLs: the library's defaults are /oauth/..., and a relative path resolves against a site
# with a path (RFC 3986 §5.2) by dropping its last segment, so 'oauth2/token' on {legacy_auth_url} leaves /legacy.
my $site = $ENV{SITE};
my %common = (
  client_id => $ENV{CLIENT_ID}, client_secret => $ENV{CLIENT_SECRET},
  authorize_url => "$site/oauth2/authorize", access_token_url => "$site/oauth2/token", refresh_token_url => "$site/oauth2/token",
  (length($ENV{SECRETS_IN_PARAMS} // "") ? (secrets_in_params => $ENV{SECRETS_IN_PARAMS}) : ()),
);

# Net::OAuth2 croaks on an error response with its status line and body as text; the RFC 6749 error code is in
# that body, the only place the caller can read it from.
sub attempt {
  my ($step) = @_;
  my $value = eval { $step->() };
  return $value unless $@;
  my ($status) = $@ =~ /received error: (\d{3})/;
  # The body is cut at 200 characters, so the fields are matched, not the JSON decoded.
  my ($error) = $@ =~ /"error":"([^"]*)"/;
  my $described = $@ =~ /"error_description":"[^"]/;
  return { error => $error, status => $status ? $status + 0 : undef, has_description => $described ? JSON::PP::true : JSON::PP::false };
}

# The protected API the library's way: AccessToken->get sends Authorization: Bearer (token_scheme's default).
sub api {
  my ($token) = @_;
  my $res = $token->get($ENV{API_URL});
  my $body = ($res->header('Content-Type') // '') =~ m{^application/json} ? $json->decode($res->decoded_content) : undef;
  return { status => $res->code + 0, body => $body };
}

sub token_fields {
  my ($token) = @_;
  return [sort grep { $_ ne 'profile' && $_ ne 'client' && $_ ne 'auto_refresh' && defined $token->attribute($_) } keys %{$token->{NOA_attr}}];
}

sub code_flow {
  my $auth = Net::OAuth2::Profile::WebServer->new(%common, redirect_uri => $ENV{REDIRECT_URI}, state => 'perl-state');
  emit({ authorization_url => $auth->authorize->as_string });
  my $callback = <STDIN>;
  chomp $callback;
  my %query = URI->new($callback)->query_form;
  my $token = $auth->get_access_token($query{code});
  my %result = (state => $query{state}, token_fields => token_fields($token), api => api($token));

  # refresh() sends the grant with the profile's client authentication; update_token keeps the refresh token
  # when the response carries none (SPEC §4.5).
  my ($first_access, $refresh_token) = ($token->access_token, $token->refresh_token);
  $token->refresh;
  my $second_access = $token->access_token;
  $result{refresh} = { new_access_token => $second_access ne $first_access ? JSON::PP::true : JSON::PP::false,
                       kept_refresh_token => ($token->refresh_token // '') eq $refresh_token ? JSON::PP::true : JSON::PP::false,
                       api => api($token) };
  # auto_refresh: access_token() refreshes a token that expires within 15 s before the request.
  $token->{NOA_expires_at} = time() - 60;
  $result{auto_refresh} = { api => api($token), new_access_token => $token->access_token ne $second_access ? JSON::PP::true : JSON::PP::false };

  # Net::OAuth2 has no revocation call: a request built like its token requests (same client authentication).
  my $revoke = $auth->build_request('POST', "$site/oauth2/revoke",
    { token => $refresh_token, client_id => $auth->id, client_secret => $auth->secret });
  my $revoked = $auth->request($revoke);
  $result{revoke} = { status => $revoked->code + 0, refresh => attempt(sub { $token->refresh; {} }) };
  # Last: a replayed code revokes what it issued (RFC 6749 §4.1.2).
  $result{replayed_code} = attempt(sub { $auth->get_access_token($query{code}) });
  $result{unknown_code} = attempt(sub { $auth->get_access_token('not-a-code') });
  return \%result;
}

sub credentials_flow {
  # Net::OAuth2 has no client_credentials profile; the Password one (SPEC §1 lists this flow under "Username and
  # Password") with grant_type client_credentials and no username or password sends what SPEC §4.4 asks for.
  my $profile = sub { Net::OAuth2::Profile::Password->new(%common, grant_type => 'client_credentials', @_) };
  my $token = $profile->()->get_access_token;
  my %result = (token_fields => token_fields($token), api => api($token),
                wrong_secret => attempt(sub { $profile->(client_secret => "$ENV{CLIENT_SECRET}x")->get_access_token }));
  # More integrations in this one process: EXTRA_CLIENTS is a JSON array of {label, client_id, client_secret,
  # site?, token_url?, decode?}. Secrets stay the UTF-8 bytes the environment gave, as read from a file or %ENV; decode makes
  # them characters, as a `use utf8` literal is (Basic then carries them in ISO-8859-1: MIME::Base64 takes octets).
  for my $extra (@{ JSON::PP->new->utf8->decode($ENV{EXTRA_CLIENTS} // '[]') }) {
    my $secret = $extra->{decode} ? $extra->{client_secret} : Encode::encode('UTF-8', $extra->{client_secret});
    my $at = $extra->{site} // $site;
    # token_url: the library's own site + path resolution (a path with a leading / replaces the site's path).
    my %endpoint = $extra->{token_url} ? (site => $at, access_token_url => $extra->{token_url}) : (access_token_url => "$at/oauth2/token");
    $result{$extra->{label}} = attempt(sub { { api => api($profile->(client_id => $extra->{client_id}, client_secret => $secret, %endpoint)->get_access_token) } });
  }
  return \%result;
}

emit(($ARGV[0] // '') eq 'code' ? code_flow() : credentials_flow());
