// The cabinet's outgoing mail (team invitations, password resets) through the SMTP
// server PAYGATE_SMTP_URL names, with nodemailer. Without one the cabinet has no
// mailer and shows the link to the person who asked, to pass on by hand.
import nodemailer from 'nodemailer';
import type { Config } from '../../config.ts';

interface MailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/** Sending waits at most this long for the server; a slow server fails the action, which says so. */
const SMTP_TIMEOUT_MS = 15_000;

export function createMailer(config: Pick<Config, 'smtpUrl' | 'mailFrom'>): Mailer | undefined {
  if (!config.smtpUrl) return undefined;
  const transport = nodemailer.createTransport({
    url: config.smtpUrl,
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    async send(message) {
      await transport.sendMail({ from: config.mailFrom, to: message.to, subject: message.subject, text: message.text });
    },
    close: () => transport.close(),
  };
}
