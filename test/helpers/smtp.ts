import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

/**
 * A real SMTP server on loopback that keeps every message it is given; while `refuse()` says so it answers each
 * message with a temporary failure (451) and keeps it in `refused` instead.
 */
export async function startSmtpServer(
  options: { refuse?: () => boolean } = {},
): Promise<{ url: string; mails: ReceivedMail[]; refused: ReceivedMail[]; close(): Promise<void> }> {
  const mails: ReceivedMail[] = [];
  const refused: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on loopback: the server's self-signed STARTTLS certificate would only be refused by nodemailer.
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const mail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        };
        if (options.refuse?.()) {
          refused.push(mail);
          callback(Object.assign(new Error('mailbox busy, try again later'), { responseCode: 451 }));
          return;
        }
        mails.push(mail);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
