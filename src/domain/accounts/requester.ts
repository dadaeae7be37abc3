// Who is making a request: the authenticated user and device, as every domain operation receives it.

export interface Requester {
  userId: string;
  deviceId: string | null;
  isGuest: boolean;
  isAdmin: boolean;
  /** Id of the access token used (not the token itself). Null for application services. */
  accessTokenId: string | null;
  /** The account is suspended (MSC3823): it may read and leave, not send, join or change its profile. */
  suspended?: boolean;
  /** Set when an application service made the request (its as_token), possibly masquerading as a user. */
  appserviceId?: string;
}
