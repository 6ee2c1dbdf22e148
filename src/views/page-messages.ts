// The text of the router's pages: the catalogue a host translates, and the built-in English one.

/**
 * A message: plain text, never HTML. `{name}` marks where the router puts a value (an integration's name, the
 * username, a count); the router escapes the text and the value and wraps a name in `<bdi>`, so a translation can
 * neither inject markup nor take a name's isolation away. Which names a message takes is listed on it; another
 * `{name}` is refused at start-up.
 */
export type PageMessage = string;

/**
 * A message whose words depend on a number (plural forms): the text, or a function of the number that returns the
 * text, still with `{name}` placeholders (the number is put in by the router).
 */
export type CountedPageMessage = string | ((count: number) => string);

/**
 * Every text the login, consent, connected-applications, error and sign-out pages show. A host's catalogue is a
 * `Partial<PageMessages>` (`PageCatalogue`): a message it leaves out is shown in English.
 * @see WCAG 2.2 §3.1.1 (language of page), §3.1.2 (language of parts).
 */
export interface PageMessages {
  /** Login page `<title>` and heading. */
  readonly signInTitle: PageMessage;
  /** Login page `<title>` after a failed attempt (a screen reader announces it first). */
  readonly signInErrorTitle: PageMessage;
  /** `{product}`: the service whose account signs in. */
  readonly signInIntro: PageMessage;
  /** `{product}`, `{client}`: the integration the sign-in continues to. */
  readonly signInIntroToClient: PageMessage;
  readonly usernameLabel: PageMessage;
  readonly passwordLabel: PageMessage;
  readonly signInButton: PageMessage;
  readonly cancelButton: PageMessage;
  readonly signInFailed: PageMessage;
  readonly signInFormExpired: PageMessage;
  /** `{minutes}`: how long until the next attempt, rounded up. */
  readonly signInLockedOut: CountedPageMessage;

  /** Consent page `<title>` and heading. `{client}`. */
  readonly consentTitle: PageMessage;
  /** Consent page `<title>` shown again after a click on an expired copy of it (a screen reader announces it first). `{client}`. */
  readonly consentErrorTitle: PageMessage;
  /** The notice on the consent page shown again after a click on an expired copy of it: nothing was decided. `{client}`. */
  readonly consentFormExpired: PageMessage;
  /** The same notice on the sign-in page, when the session it was made for has ended meanwhile. `{client}`. */
  readonly consentFormExpiredSignIn: PageMessage;
  /** The same notice answering a Deny whose session has ended, above one Deny button that needs no sign-in. `{client}`. */
  readonly consentFormExpiredDeny: PageMessage;
  /**
   * The same notice, when the request asks for a fresh sign-in (`prompt=login`, `max_age`) that only the host's login
   * could make, whose time the router cannot tell: above one Deny button, the way back to the integration. `{client}`.
   */
  readonly consentFormExpiredFreshSignIn: PageMessage;
  /** `{client}`, `{product}`. */
  readonly consentWants: PageMessage;
  /** Shown in bold before `consentAllAccess`. */
  readonly consentAllAccessLead: PageMessage;
  /** `{product}`. */
  readonly consentAllAccess: PageMessage;
  readonly consentScopesIntro: PageMessage;
  /** `{product}`: a request with an empty scope list. */
  readonly consentNoScopes: PageMessage;
  /** `{user}`; also on the connected-applications page. */
  readonly signedInAs: PageMessage;
  /** `{origin}`, `{client}`, `{consentsLink}` (a link whose text is `consentsTitle`). */
  readonly consentAfterChoice: PageMessage;
  readonly allowButton: PageMessage;
  readonly denyButton: PageMessage;
  /** `{user}`. */
  readonly notUser: PageMessage;
  readonly switchAccountButton: PageMessage;

  /** Connected-applications page `<title>` and heading, and the consent page's link to it. */
  readonly consentsTitle: PageMessage;
  /** `{client}`. */
  readonly consentWithdrawn: PageMessage;
  /** The same, for an integration deleted meanwhile. */
  readonly consentWithdrawnUnnamed: PageMessage;
  readonly fullAccess: PageMessage;
  /**
   * An integration the user allowed only scopes the `scopes` option has dropped since: it can do nothing now, yet is
   * listed, with its Withdraw, since the option given a scope back would make its unexpired tokens hold it again.
   */
  readonly consentsNoPermissions: PageMessage;
  /** `{date}`. */
  readonly allowedOn: PageMessage;
  /** The Withdraw button's accessible name. `{client}`. */
  readonly withdrawLabel: PageMessage;
  readonly withdrawButton: PageMessage;
  readonly noConsents: PageMessage;
  readonly signOutButton: PageMessage;

  /** Error page `<title>`. */
  readonly errorTitle: PageMessage;
  readonly errorHeading: PageMessage;
  /** An error in the integration's request, said to the user. */
  readonly errorFromApplication: PageMessage;
  /** `{details}`: the error code and the developer's description (in English). */
  readonly errorDetails: PageMessage;
  /** `{code}`. */
  readonly errorCode: PageMessage;

  readonly signedOutTitle: PageMessage;
  readonly signedOutHeading: PageMessage;
  /** `{product}`. */
  readonly signedOutText: PageMessage;
  readonly signedOutClose: PageMessage;
  readonly stillSignedInTitle: PageMessage;
  readonly stillSignedInHeading: PageMessage;
  /** `{product}`, `{hostSignOut}` (`hostSignOutLink`, a link when the host names its sign-out). */
  readonly stillSignedInText: PageMessage;
  readonly hostSignOutLink: PageMessage;

  readonly formExpiredReload: PageMessage;
  readonly formExpiredStartAgain: PageMessage;
  readonly signInRequestExpired: PageMessage;
  readonly authorizationRequestExpired: PageMessage;
  readonly signInUnavailable: PageMessage;
  readonly signOutUnavailable: PageMessage;
  readonly pageUnavailable: PageMessage;
  readonly serviceUnavailable: PageMessage;
  readonly httpsRequired: PageMessage;
  readonly crossSiteForm: PageMessage;
  readonly chooseApplication: PageMessage;
  readonly chooseAllowOrDeny: PageMessage;
  /** A sign-out (by the host's login) while the consent page was open. */
  readonly signedOutMeanwhile: PageMessage;
  /** A Deny of a request already allowed (409), where the connected-applications page lists it. */
  readonly alreadyAllowedWithdraw: PageMessage;
  /** The same, where the service has no connected-applications page (or remembers no consent). */
  readonly alreadyAllowedAsk: PageMessage;
  /** Back from the host's login still signed out (403): the page says why it does not send the user there again. */
  readonly hostSignInLoop: PageMessage;
  /** A page opened by a form (405 on the authorization or connected-applications address). */
  readonly openedByLink: PageMessage;
  /** A form's address opened directly (405: Enter in the address bar after a form was sent). */
  readonly formCannotBeOpened: PageMessage;
  /** A form whose body did not arrive in time (408). */
  readonly formTooSlow: PageMessage;
  /** A form larger than the page accepts (413). */
  readonly formTooLarge: PageMessage;
  /** A form in an encoding the page does not read (415, 501). */
  readonly formEncodingUnsupported: PageMessage;
  /** Any other request a page could not read (400). */
  readonly requestUnreadable: PageMessage;
  /** The authorization endpoint could not read the integration: the store is out (503). */
  readonly authorizationServerUnavailable: PageMessage;
  /** The same, for anything else that broke there (500; logged for the administrator). */
  readonly authorizationServerFailed: PageMessage;

  /**
   * The consent and connected-applications pages' sentence for each scope, in this language (the `scopes` option's
   * are the English ones). A scope left out is shown with the `scopes` option's sentence. With a non-empty `scopes`
   * option, a scope outside it is an `OptionsError` at start-up (a typo would leave the scope untranslated).
   */
  readonly scopes?: Readonly<Record<string, string>>;
}

/** A host's translation of the pages into one language: any messages of `PageMessages`, the rest in English. */
export type PageCatalogue = Partial<PageMessages>;

/** The message keys that say the same thing whatever went wrong: the error page's descriptions for the user. */
export type PageErrorMessage =
  | 'formExpiredReload' | 'formExpiredStartAgain' | 'signInRequestExpired' | 'authorizationRequestExpired'
  | 'signInUnavailable' | 'signOutUnavailable' | 'pageUnavailable' | 'serviceUnavailable' | 'httpsRequired'
  | 'crossSiteForm' | 'chooseApplication' | 'chooseAllowOrDeny' | 'signedOutMeanwhile' | 'alreadyAllowedWithdraw'
  | 'alreadyAllowedAsk' | 'hostSignInLoop' | 'openedByLink' | 'formCannotBeOpened' | 'formTooSlow' | 'formTooLarge'
  | 'formEncodingUnsupported' | 'requestUnreadable' | 'authorizationServerUnavailable' | 'authorizationServerFailed';

/**
 * The pages in English: the default, and what every message a catalogue leaves out falls back to. Frozen: it is
 * exported as the list of messages, and an edit in place would reword every router's English pages unchecked.
 */
export const ENGLISH_PAGE_MESSAGES: PageMessages = Object.freeze<PageMessages>({
  signInTitle: 'Sign in',
  signInErrorTitle: 'Error: Sign in',
  signInIntro: 'Sign in with your {product} account.',
  signInIntroToClient: 'Sign in with your {product} account to continue to {client}.',
  usernameLabel: 'Username',
  passwordLabel: 'Password',
  signInButton: 'Sign in',
  cancelButton: 'Cancel',
  signInFailed: 'The username or password is incorrect.',
  signInFormExpired: 'This sign-in form had expired, so you were not signed in. Please sign in again.',
  signInLockedOut: (minutes) => `Too many failed sign-in attempts. Try again in ${minutes <= 1 ? 'a minute' : '{minutes} minutes'}.`,

  consentTitle: 'Allow {client}?',
  consentErrorTitle: 'Error: Allow {client}?',
  consentFormExpired: 'This page had expired, so nothing was sent to {client}. Choose again.',
  consentFormExpiredSignIn: 'This page had expired, so nothing was sent to {client}. Sign in to choose again.',
  consentFormExpiredDeny: 'This page had expired, so nothing was sent to {client}. Press Deny again to refuse; no sign-in is needed.',
  consentFormExpiredFreshSignIn: 'This page had expired, so nothing was sent to {client}. It asked for a new sign-in, which cannot be made '
    + 'here, so it cannot be allowed now. Press Deny to refuse and return to {client}.',
  consentWants: '{client} wants to access your {product} account.',
  consentAllAccessLead: 'It asks for full access to your account:',
  consentAllAccess: 'it will be able to do everything you can do in {product}, on your behalf.',
  consentScopesIntro: 'It asks for these permissions:',
  consentNoScopes: 'It asks to access {product} on your behalf.',
  signedInAs: 'Signed in as {user}.',
  consentAfterChoice: 'After you choose, you will be sent back to {origin}. Deny shares nothing with {client}; if you allow, '
    + 'you can withdraw its access at any time under {consentsLink}.',
  allowButton: 'Allow',
  denyButton: 'Deny',
  notUser: 'Not {user}?',
  switchAccountButton: 'Use another account',

  consentsTitle: 'Connected applications',
  consentWithdrawn: '{client} no longer has access to your account.',
  consentWithdrawnUnnamed: 'The application no longer has access to your account.',
  fullAccess: 'Full access to your account',
  consentsNoPermissions: 'No permissions at the moment.',
  allowedOn: 'Allowed on {date}',
  withdrawLabel: 'Withdraw access of {client}',
  withdrawButton: 'Withdraw access',
  noConsents: 'No application has access to your account.',
  signOutButton: 'Sign out',

  errorTitle: 'Request cannot be completed',
  errorHeading: 'This request cannot be completed',
  errorFromApplication: 'The application that sent you here made a request this service cannot accept, so you have not been sent back to it.',
  errorDetails: 'Return to the application and try again, or contact its support with these details: {details}.',
  errorCode: 'Error code: {code}. Return to the application you came from and try again, or contact its support.',

  signedOutTitle: 'Signed out',
  signedOutHeading: 'You are signed out',
  signedOutText: 'You are no longer signed in to {product} in this browser. An application that asks for access again will ask you to sign in first.',
  signedOutClose: 'You can close this page.',
  stillSignedInTitle: 'Still signed in',
  stillSignedInHeading: 'You are still signed in',
  stillSignedInText: "You signed in on {product}'s own pages, so this page cannot sign you out: use {hostSignOut}. Until then, an "
    + 'application that asks for access can be answered without asking you to sign in.',
  hostSignOutLink: 'its own sign-out',

  formExpiredReload: 'The form has expired. Reload the page and try again.',
  formExpiredStartAgain: 'The form has expired. Go back to the application and start again.',
  signInRequestExpired: 'This sign-in request has expired. Go back to the application and start again.',
  authorizationRequestExpired: 'This authorization request has expired. Go back to the application and start again.',
  signInUnavailable: 'Sign-in is not available right now. Please try again later.',
  signOutUnavailable: 'Signing out is not available right now. Please try again later.',
  pageUnavailable: 'This page is not available right now. Please try again later.',
  serviceUnavailable: 'The service is not available right now. Please try again later.',
  httpsRequired: 'Sign-in needs a secure (https) connection. Open the application again from its https address.',
  crossSiteForm: 'This form was sent from another site or address. Go back to the application and start again.',
  chooseApplication: 'Sign in and choose an application.',
  chooseAllowOrDeny: 'Choose Allow or Deny.',
  signedOutMeanwhile: 'You are no longer signed in. Go back to the application and start again.',
  alreadyAllowedWithdraw: 'You already allowed this request, and the application has received access. To take it back, '
    + 'withdraw your consent on the page that lists the applications you allowed.',
  alreadyAllowedAsk: 'You already allowed this request, and the application has received access. To take it back, '
    + 'ask the application, or this service, to remove its access.',
  hostSignInLoop: 'You came back from the sign-in page, but this site still sees you as signed out, so you are not sent '
    + "there again. If you did sign in, the site's sign-in is set up wrongly: its administrator will find the cause in the server log.",
  openedByLink: 'This address is opened by a link, not by a form.',
  formCannotBeOpened: 'This address receives a form and cannot be opened directly. Return to the application you came from and start again.',
  formTooSlow: 'The form took too long to arrive. Go back and try again.',
  formTooLarge: 'The form is larger than this page accepts.',
  formEncodingUnsupported: 'The form was sent in an encoding this page does not read.',
  requestUnreadable: 'The request could not be read.',
  // The descriptions of RFC 6749 §4.1.2.1's codes, as this page has always shown them in English.
  authorizationServerUnavailable: 'the authorization server is temporarily unavailable',
  authorizationServerFailed: 'the server encountered an unexpected condition',
});

/** The `{name}`s each message may hold: a catalogue's message with any other is refused at start-up. */
export const PAGE_MESSAGE_PLACEHOLDERS: Readonly<Record<Exclude<keyof PageMessages, 'scopes'>, readonly string[]>> = {
  signInTitle: [], signInErrorTitle: [], signInIntro: ['product'], signInIntroToClient: ['product', 'client'],
  usernameLabel: [], passwordLabel: [], signInButton: [], cancelButton: [], signInFailed: [], signInFormExpired: [],
  signInLockedOut: ['minutes'],
  consentTitle: ['client'], consentErrorTitle: ['client'], consentFormExpired: ['client'], consentFormExpiredSignIn: ['client'],
  consentFormExpiredDeny: ['client'], consentFormExpiredFreshSignIn: ['client'],
  consentWants: ['client', 'product'], consentAllAccessLead: [], consentAllAccess: ['product'],
  consentScopesIntro: [], consentNoScopes: ['product'], signedInAs: ['user'], consentAfterChoice: ['origin', 'client', 'consentsLink'],
  allowButton: [], denyButton: [], notUser: ['user'], switchAccountButton: [],
  consentsTitle: [], consentWithdrawn: ['client'], consentWithdrawnUnnamed: [], fullAccess: [], consentsNoPermissions: [], allowedOn: ['date'],
  withdrawLabel: ['client'], withdrawButton: [], noConsents: [], signOutButton: [],
  errorTitle: [], errorHeading: [], errorFromApplication: [], errorDetails: ['details'], errorCode: ['code'],
  signedOutTitle: [], signedOutHeading: [], signedOutText: ['product'], signedOutClose: [],
  stillSignedInTitle: [], stillSignedInHeading: [], stillSignedInText: ['product', 'hostSignOut'], hostSignOutLink: [],
  formExpiredReload: [], formExpiredStartAgain: [], signInRequestExpired: [], authorizationRequestExpired: [],
  signInUnavailable: [], signOutUnavailable: [], pageUnavailable: [], serviceUnavailable: [], httpsRequired: [],
  crossSiteForm: [], chooseApplication: [], chooseAllowOrDeny: [], signedOutMeanwhile: [], alreadyAllowedWithdraw: [],
  alreadyAllowedAsk: [], hostSignInLoop: [], openedByLink: [], formCannotBeOpened: [], formTooSlow: [], formTooLarge: [],
  formEncodingUnsupported: [], requestUnreadable: [], authorizationServerUnavailable: [], authorizationServerFailed: [],
};
