// Which Redis failures are an outage (503 temporarily_unavailable) and which a bug (500), whatever the server's version.
import { describe, expect, it } from 'vitest';
import { rethrowRedisError } from '../../src/stores/redis/errors.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';

/** What rethrowRedisError makes of a reply error with this message. */
function mapped(message: string): Error {
  try {
    rethrowRedisError(new Error(message));
  } catch (error) {
    return error as Error;
  }
}

describe('Redis replies that refuse writes for now are StoreUnavailableError (RFC 6749 §5.2 temporarily_unavailable)', () => {
  it.each([
    // Redis 7: the script passes the inner command's reply on as its own.
    ["OOM command not allowed when used memory > 'maxmemory'.", 'OOM'],
    // Redis 6 and 5: the same reply wrapped by the script runner (as reported from Redis 6 servers).
    ["ERR Error running script (call to f_0a9a51ee96320953ec7bde8e63f3f060b9dac00c): @user_script:41: @user_script: 41: -OOM command not allowed when used memory > 'maxmemory'.   ", 'OOM'],
    ['ERR Error running script (call to f_8426c8df41c64d8177dce3ecbbe9146ef3759cd2): @user_script:6: @user_script: 6: -READONLY You can\'t write against a read only replica.', 'READONLY'],
    ['ERR Error running script (call to f_8426c8df41c64d8177dce3ecbbe9146ef3759cd2): @user_script:6: @user_script: 6: -MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk.', 'MISCONF'],
  ])('%s → 503 (%s)', (message, kind) => {
    const error = mapped(message);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error.message).toBe(`Redis store unavailable (${kind})`);
  });

  it.each([
    'ERR Error running script (call to f_8426c8df41c64d8177dce3ecbbe9146ef3759cd2): @user_script:6: user_script:6: Script attempted to access nonexistent global variable \'x\'',
    "WRONGTYPE Operation against a key holding the wrong kind of value",
    "ERR wrong number of arguments for 'get' command",
  ])('%s is a bug, rethrown as it is (500)', (message) => {
    const error = mapped(message);
    expect(error).not.toBeInstanceOf(StoreUnavailableError);
    expect(error.message).toBe(message);
  });
});
