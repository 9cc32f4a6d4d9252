import { Compile } from 'typebox/compile';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, type EventType } from '../../../src/core/event-catalog';
import { EVENT_SCHEMAS, exampleEvent } from '../../../src/core/event-schemas';
import { validateEventInput } from '../../../src/domain/events';
import { sampleEventData, seededRandom } from '../../../src/domain/parcel-simulator';

const bodyCheck = (type: EventType) => Compile(EVENT_SCHEMAS[type]);
const publish = (type: string, data: unknown) => () =>
  validateEventInput({ accountId: 'acct_1', livemode: false, type, data });

function refusal(type: string, data: unknown): { code: string; param: unknown } {
  try {
    publish(type, data)();
  } catch (err) {
    const error = err as { code: string; extra: { param?: unknown } };
    return { code: error.code, param: error.extra.param };
  }
  throw new Error(`${type} with ${JSON.stringify(data)} was accepted`);
}

describe('event schemas', () => {
  it.each(EVENT_TYPES)(
    '%s: the example body, and the data the simulator and test events make, have its shape',
    (type) => {
      const check = bodyCheck(type);
      expect(check.Check(exampleEvent(type)), JSON.stringify([...check.Errors(exampleEvent(type))])).toBe(true);
      for (let seed = 1; seed <= 20; seed += 1) {
        const data = sampleEventData(type, seededRandom(seed));
        expect(publish(type, data)).not.toThrow();
        // The whole body, as sendTestEvent and publishEvent wrap it.
        const body = { id: 'evt_sample', object: 'event', type, created: 1767258000, data, livemode: false };
        expect(check.Check(body), JSON.stringify([...check.Errors(body)])).toBe(true);
      }
    },
  );

  it('tells the kinds apart: a body is accepted only by its own kind', () => {
    for (const type of EVENT_TYPES) {
      const accepting = EVENT_TYPES.filter((kind) => bodyCheck(kind).Check(exampleEvent(type)));
      expect(accepting).toEqual([type]);
    }
  });

  it('refuses a payload of the wrong shape with invalid_event_data naming the field', () => {
    const parcel = exampleEvent('parcel.delivered').data.parcel;
    const settlement = exampleEvent('cod.settled').data.cod_settlement;
    const { parcel_number: _dropped, ...withoutNumber } = parcel;
    expect(refusal('parcel.delivered', {})).toEqual({ code: 'invalid_event_data', param: 'data.parcel' });
    expect(refusal('parcel.delivered', { parcel: withoutNumber })).toEqual({
      code: 'invalid_event_data',
      param: 'data.parcel.parcel_number',
    });
    expect(refusal('parcel.delivered', { parcel: { ...parcel, total_fee: '350' } })).toEqual({
      code: 'invalid_event_data',
      param: 'data.parcel.total_fee',
    });
    expect(refusal('parcel.delivered', { parcel, note: 'x' })).toEqual({
      code: 'invalid_event_data',
      param: 'data.note',
    });
    expect(refusal('parcel.delivered', { parcel: [] })).toEqual({ code: 'invalid_event_data', param: 'data.parcel' });
    expect(refusal('parcel.delivered', 'parcel')).toEqual({ code: 'invalid_event_data', param: 'data' });
    expect(refusal('cod.settled', { parcel })).toEqual({ code: 'invalid_event_data', param: 'data.cod_settlement' });
    const settledParcel = exampleEvent('cod.settled').data.parcel;
    expect(
      refusal('cod.settled', { parcel: settledParcel, cod_settlement: { ...settlement, settled_at: 1.5 } }),
    ).toEqual({
      code: 'invalid_event_data',
      param: 'data.cod_settlement.settled_at',
    });
    // In the shape of 2026-11-21, the field is named in that shape's terms.
    const asBefore = { ...settlement, parcel_id: settledParcel.id, parcel_number: settledParcel.parcel_number };
    expect(refusal('cod.settled', { cod_settlement: { ...asBefore, settled_at: 1.5 } })).toEqual({
      code: 'invalid_event_data',
      param: 'data.cod_settlement.settled_at',
    });
    const { parcel_id: _noParcel, ...withoutParcelId } = asBefore;
    expect(refusal('cod.settled', { cod_settlement: withoutParcelId })).toEqual({
      code: 'invalid_event_data',
      param: 'data.cod_settlement.parcel_id',
    });
    expect(refusal('parcel.lost', { parcel })).toEqual({ code: 'unknown_event_type', param: 'type' });
  });

  it('lets through fields of the parcel and the settlement that the schema does not name', () => {
    expect(
      publish('parcel.created', { parcel: { ...exampleEvent('parcel.created').data.parcel, weight_kg: 1.2 } }),
    ).not.toThrow();
    const { parcel, cod_settlement: settlement } = exampleEvent('cod.settled').data;
    expect(publish('cod.settled', { parcel, cod_settlement: { ...settlement, note: 'x' } })).not.toThrow();
  });
});
