import type { Command } from 'commander';
import { getAccount } from '../../domain/accounts';
import { findAttempt } from '../../domain/deliveries';
import { CLI_ACTOR } from '../../domain/audit-log';
import { deleteEndpoint, registerLocalEndpoint } from '../../domain/endpoints';
import { createSessionCertificate } from '../../infra/session-certificate';
import type { CliContext } from '../context';
import { startLocalReceiver, type ReceivedDelivery } from '../local-receiver';

/**
 * `listen --account ID [--forward-to URL] [--unordered]`: a local HTTPS receiver registered as a test-mode
 * endpoint for the session (kept in order per parcel unless --unordered), printing each delivery as it arrives,
 * with its parcel and sequence, and removing the endpoint on
 * Ctrl-C or SIGTERM. The endpoint pins the session's certificate: the worker posts to this loopback URL without
 * WEBHOOK_ALLOW_PRIVATE_TARGETS, and only this process can answer it (db/migrations/..._recovery-and-listen.sql).
 */

// The engine records an attempt right after our answer; this is how long we wait to learn its number.
const RECORD_WAIT_MS = 3_000;
const RECORD_POLL_MS = 50;

type Line = Record<string, unknown>;

export function registerListen(program: Command, ctx: CliContext): void {
  program
    .command('listen')
    .description("Receive an account's test-mode deliveries on this machine while it runs")
    .requiredOption('--account <id>', 'the account whose test-mode events to receive (acct_...)')
    .option(
      '--forward-to <url>',
      'also POST each delivery, with its headers, to your local server (e.g. http://localhost:4000/webhooks)',
    )
    .option('--unordered', "receive a parcel's events as they come, not one at a time in sequence order")
    .option('--json', 'print one JSON document per line')
    .addHelpText(
      'after',
      '\nExample:\n  $ parcel-webhooks listen --account acct_... --forward-to http://localhost:4000/webhooks',
    )
    .action(async (options: { account: string; forwardTo?: string; unordered?: boolean }, command: Command) => {
      const json = command.optsWithGlobals<{ json?: boolean }>().json === true;
      const say = (line: Line, human: string) => process.stdout.write(`${json ? JSON.stringify(line) : human}\n`);
      if (options.forwardTo !== undefined) new URL(options.forwardTo); // a clear error before anything is registered
      await getAccount(ctx.pool, options.account);
      const certificate = createSessionCertificate();
      let secret: string | undefined;
      const describe = async (d: ReceivedDelivery) => {
        const found = d.attemptId ? await waitForRecord(ctx, d.attemptId) : undefined;
        const line: Line = {
          type: 'delivery',
          event_id: d.eventId,
          event_type: d.eventType,
          parcel_id: d.parcelId,
          sequence: d.sequence,
          attempt: found?.attempt ?? null,
          trigger: found?.trigger ?? null,
          signature_verified: d.signatureVerified,
          ...(options.forwardTo ? { forwarded_status: d.forwardedStatus, forward_error: d.forwardError } : {}),
        };
        const forwarded = options.forwardTo ? `  -> ${d.forwardedStatus ?? d.forwardError} ${options.forwardTo}` : '';
        const attempt = found
          ? `attempt ${found.attempt}${found.trigger === 'automatic' ? '' : ` (${found.trigger})`}`
          : 'attempt ?';
        const parcel =
          d.parcelId === null ? '' : ` parcel ${d.parcelId}${d.sequence === null ? '' : ` #${d.sequence}`}`;
        say(
          line,
          `${d.eventType} ${d.eventId}${parcel} ${attempt} ${d.signatureVerified ? 'signature verified' : 'SIGNATURE NOT VERIFIED'}${forwarded}`,
        );
      };
      const receiver = await startLocalReceiver({
        certificate,
        secret: () => secret,
        forwardTo: options.forwardTo,
        onDelivery: (d) => void describe(d).catch(() => undefined),
      });
      const deps = { pool: ctx.pool, config: ctx.config };
      const endpoint = await registerLocalEndpoint(deps, {
        accountId: options.account,
        url: receiver.url,
        certificate: certificate.cert,
        // A parcel's events one at a time, in sequence order, as a receiver that keeps state needs them.
        ordering: options.unordered ? 'none' : 'parcel',
      });
      secret = endpoint.secret;
      say(
        {
          type: 'listening',
          endpoint_id: endpoint.id,
          url: receiver.url,
          secret: endpoint.secret,
          api_version: endpoint.api_version,
          ordering: endpoint.ordering,
        },
        `Ready: test-mode deliveries of ${options.account} arrive at ${receiver.url} (endpoint ${endpoint.id}, API version ${endpoint.api_version}, ${endpoint.ordering === 'parcel' ? 'in order per parcel' : 'unordered'}). ` +
          `Signing secret ${endpoint.secret}. Ctrl-C to stop.`,
      );
      await untilStopped();
      // The endpoint goes with the session: its certificate's key is about to disappear.
      await deleteEndpoint(deps, { accountId: options.account, livemode: false }, endpoint.id, CLI_ACTOR).catch(
        () => undefined,
      );
      await receiver.close();
      if (!json) process.stderr.write(`removed ${endpoint.id}\n`);
    });
}

async function waitForRecord(ctx: CliContext, attemptId: string) {
  const deadline = Date.now() + RECORD_WAIT_MS;
  for (;;) {
    const found = await findAttempt(ctx.pool, attemptId);
    if (found || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, RECORD_POLL_MS));
  }
}

function untilStopped(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
