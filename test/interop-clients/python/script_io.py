# What both Python client scripts share: their environment, how they print results, and the protected API call.
import json
import os

ENV = os.environ


def emit(value):
    """One JSON line on stdout; the test reads the last one as the result."""
    print(json.dumps(value), flush=True)


def attempt(step, error_type):
    """Runs one step; an OAuth error is recorded by its RFC 6749 error code instead of ending the script."""
    try:
        return step()
    except error_type as error:
        return {'error': error.error}


def api(session):
    """Calls the requireBearer-protected route with the session's token: its status and JSON body."""
    res = session.get(ENV['API_URL'])
    return {'status': res.status_code, 'body': res.json() if res.headers.get('content-type', '').startswith('application/json') else None}
