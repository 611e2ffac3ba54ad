// A real SMTP server on 127.0.0.1 (the smtp-server package) that keeps every
// message it accepts, for tests of the mail the cabinet sends. `next()` waits for
// the next message with no deadline of its own (the test's timeout is the bound).
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  readonly from: string;
  readonly to: readonly string[];
  /** The raw message: headers and body as sent. */
  readonly raw: string;
}

export interface SmtpReceiver {
  /** smtp://127.0.0.1:<port> for PAYGATE_SMTP_URL. */
  readonly url: string;
  readonly messages: readonly ReceivedMail[];
  /** The next message not yet taken by `next()` (already received or still to come). */
  next(): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const messages: ReceivedMail[] = [];
  const waiters: Array<(mail: ReceivedMail) => void> = [];
  let taken = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        };
        messages.push(mail);
        const waiter = waiters.shift();
        if (waiter) {
          taken++;
          waiter(mail);
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    next() {
      const ready = messages[taken];
      if (ready) {
        taken++;
        return Promise.resolve(ready);
      }
      return new Promise((resolve) => waiters.push(resolve));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The first cabinet link (…/cabinet/…) in a message, quoted-printable soft breaks undone. */
export function cabinetLinkIn(mail: ReceivedMail): string {
  const body = mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  const match = /https?:\/\/[^\s"<>]+\/cabinet\/[^\s"<>]+/.exec(body);
  if (!match) throw new Error(`no cabinet link in the message:\n${mail.raw}`);
  return match[0];
}
