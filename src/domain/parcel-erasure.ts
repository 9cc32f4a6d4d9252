import { ApiError } from '../core/errors';
import { RESPONSE_BODY_CHARS } from '../core/delivery-policy';
import { eraseEventBody, eraseValuesIn } from '../core/personal-data';
import { lockResponseBodies, replaceResponseBodies } from '../db/delivery-attempts';
import { lockParcelEvents, markEventsErased } from '../db/events';
import { withTransaction, type Pool } from '../db/pool';

export interface ParcelErasure {
  object: 'parcel_erasure';
  parcel_id: string;
  /** The parcel's events of the account (both modes), every one of which now holds no personal value. */
  events_erased: number;
}

/**
 * Erases a parcel's personal values (the fields core/event-schemas.ts marks personal) wherever this service keeps
 * them, in one transaction: its stored events of the account, test and live mode alike (a parcel id is the parcel
 * system's, whatever the mode), and the stored answers of those events' attempts (a receiver's answer may echo the
 * body); the events are marked erased, so an answer recorded for one from now on is stored without its body. Every
 * later attempt posts the erased body, signed then. The same call again changes nothing and answers the same
 * count. Unknown parcel (no event of that account): resource_missing.
 */
export async function eraseParcel(pool: Pool, input: { accountId: string; parcelId: string }): Promise<ParcelErasure> {
  return withTransaction(pool, async (tx) => {
    const events = await lockParcelEvents(tx, input.accountId, input.parcelId);
    if (events.length === 0) {
      throw new ApiError('resource_missing', `No events of parcel ${input.parcelId} for this account.`, {
        param: 'parcel_id',
      });
    }
    const erased = events.map((event) => ({ id: event.id, ...eraseEventBody(event.type, event.body) }));
    const values = erased.flatMap((event) => event.values);
    await markEventsErased(tx, erased);
    if (values.length > 0) {
      const answers = await lockResponseBodies(
        tx,
        events.map((event) => event.id),
      );
      const changed = answers
        .map((answer) => ({
          id: answer.id,
          response_body: eraseValuesIn(answer.response_body, values, RESPONSE_BODY_CHARS),
        }))
        .filter((answer, i) => answer.response_body !== answers[i]!.response_body);
      await replaceResponseBodies(tx, changed);
    }
    return { object: 'parcel_erasure', parcel_id: input.parcelId, events_erased: events.length };
  });
}
