// The cabinet's mailer speaks SMTP to a real server on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailer } from '../../src/cabinet/mail/mailer.ts';
import { cabinetLinkIn, startSmtpReceiver, type SmtpReceiver } from '../support/smtp-receiver.ts';

describe('cabinet mailer', () => {
  let smtp: SmtpReceiver;
  beforeAll(async () => {
    smtp = await startSmtpReceiver();
  });
  afterAll(() => smtp?.close());

  it('delivers a message with its sender, recipient and link through the configured SMTP server', async () => {
    const mailer = createMailer({ smtpUrl: smtp.url, mailFrom: 'Paygate <noreply@paygate.test>' })!;
    await mailer.send({
      to: 'person@example.test',
      subject: 'Join the team',
      text: 'Open http://paygate.test/cabinet/invites/abc to join.',
    });
    mailer.close();
    const mail = await smtp.next();
    expect(mail.from).toBe('noreply@paygate.test');
    expect(mail.to).toEqual(['person@example.test']);
    expect(mail.raw).toContain('Subject: Join the team');
    expect(cabinetLinkIn(mail)).toBe('http://paygate.test/cabinet/invites/abc');
  });

  it('is absent without PAYGATE_SMTP_URL', () => {
    expect(createMailer({ smtpUrl: undefined, mailFrom: 'x@y.z' })).toBeUndefined();
  });
});
