// The sentence a page shows for a scope: the page language's, else the `scopes` option's, else the scope itself.
import type { PageMessages } from './page-messages.js';

/**
 * A scope's sentence, looked up as an own property only: a scope-token may read `constructor` or `toString`, which
 * plain indexing answers with Object.prototype's function (a TypeError as the page escapes it).
 * @see RFC 6749 §3.3 (scope-token), §4.1.1 (the user is asked about the scope requested).
 */
export function scopeSentence(scope: string, messages: PageMessages, sentences: Readonly<Record<string, string>>): string {
  if (messages.scopes !== undefined && Object.hasOwn(messages.scopes, scope)) return messages.scopes[scope]!;
  return Object.hasOwn(sentences, scope) ? sentences[scope]! : scope;
}
