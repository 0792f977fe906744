/** One email to send. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Sends mail through SMTP_URL (nodemailer, loaded with the first mail); null when SMTP is not configured. */
export class Mailer {
  private transport: Promise<{ sendMail(mail: Mail & { from: string }): Promise<unknown> }> | undefined;

  constructor(
    private readonly smtpUrl: string,
    private readonly from: string,
  ) {}

  async send(mail: Mail): Promise<void> {
    this.transport ??= import('nodemailer').then((m) => m.default.createTransport(this.smtpUrl));
    await (await this.transport).sendMail({ ...mail, from: this.from });
  }
}
