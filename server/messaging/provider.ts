// What the service asks of the messaging provider, and what it answers; implemented by
// provider-client.ts, held once per process on Services as `messaging`.

export type ProviderCredentials = { phoneNumberId: string; businessAccountId: string | null; accessToken: string };
export type ProviderTemplateSend = { to: string; templateName: string; language: string; parameters: string[] };
/** A free-form message inside the 24-hour window: text, or media by URL with the text as its caption. */
export type ProviderSessionSend = { to: string; text: string; media: { url: string; contentType: string } | null };
export type ProviderSendResult =
  | { ok: true; providerMessageId: string }
  | { ok: false; status: number | null; retryable: boolean; message: string };
export type ProviderTemplate = {
  id: string;
  name: string;
  language: string;
  category: string;
  status: string;
  components: unknown[];
  raw: Record<string, unknown>;
};
/** Why the provider would not confirm a connection's credentials. */
export type ConnectionProblem =
  | 'token_refused'
  | 'phone_number_unreachable'
  | 'business_account_unreachable'
  | 'phone_number_not_in_business_account'
  | 'provider_unavailable';
export type ConnectionCheck = { ok: true } | { ok: false; problem: ConnectionProblem; message: string };
export type MessagingProvider = {
  /**
   * Whether the token reaches the phone number and, when a business account is given, that
   * account, which must hold the number. Connections are routed by the number, so only a
   * token its owner holds may claim it.
   */
  checkConnection(credentials: ProviderCredentials): Promise<ConnectionCheck>;
  sendTemplate(credentials: ProviderCredentials, send: ProviderTemplateSend): Promise<ProviderSendResult>;
  /** A free-form message; the provider accepts it only while the contact's 24-hour window is open. */
  sendSessionMessage(credentials: ProviderCredentials, send: ProviderSessionSend): Promise<ProviderSendResult>;
  /** Every template of the business account, following the provider's paging. */
  listTemplates(credentials: ProviderCredentials): Promise<ProviderTemplate[]>;
  close(): Promise<void>;
};
