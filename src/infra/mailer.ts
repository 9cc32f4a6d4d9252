import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from './config';

/** How merchants are emailed (endpoint failing); tests pass their own SMTP server's URL through the config. */
export type Mailer = Pick<Transporter, 'sendMail'>;

/** Built from SMTP_URL; undefined when it is unset, and notifications are then stored, not emailed. */
export function createMailer(config: Pick<Config, 'smtpUrl'>): Mailer | undefined {
  return config.smtpUrl ? nodemailer.createTransport(config.smtpUrl) : undefined;
}
