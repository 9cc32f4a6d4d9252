import { describe, expect, it } from 'vitest';
import { PERSONAL_KEYWORD, PERSONAL_PATHS, ParcelSchema } from '../../../src/core/event-schemas';
import { ERASED, eraseEventBody, eraseValuesIn } from '../../../src/core/personal-data';

describe('personal data', () => {
  it('is what the schemas mark, once: the parcel events carry recipient_name and description', () => {
    const marked = Object.entries(ParcelSchema.properties)
      .filter(([, schema]) => (schema as unknown as Record<string, unknown>)[PERSONAL_KEYWORD] === true)
      .map(([field]) => field);
    expect(marked.sort()).toEqual(['description', 'recipient_name']);
    expect(PERSONAL_PATHS['parcel.delivered']).toEqual([
      ['data', 'parcel', 'description'],
      ['data', 'parcel', 'recipient_name'],
    ]);
    expect(PERSONAL_PATHS['cod.settled']).toEqual([]);
  });

  it('erases a body field by field, keeping every other byte and the member order', () => {
    const body =
      '{"id":"evt_1","object":"event","type":"parcel.created","created":1,"livemode":false,' +
      '"data":{"parcel":{"id":"p1","description":"Two \\"shirts\\"","recipient_name":"Amina","total_fee":350.5,"extra":"x"}},"sequence":3}';
    const erased = eraseEventBody('parcel.created', body);
    expect(erased.values).toEqual(['Two "shirts"', 'Amina']);
    expect(erased.body).toBe(body.replace('Two \\"shirts\\"', ERASED).replace('Amina', ERASED));
    // Again: nothing left to erase, the same bytes.
    expect(eraseEventBody('parcel.created', erased.body)).toEqual({ body: erased.body, values: [] });
    // A kind without personal fields, or one without the fields, is left as it is.
    expect(eraseEventBody('cod.settled', body)).toEqual({ body, values: [] });
    const bare = '{"data":{"parcel":{"id":"p1"}}}';
    expect(eraseEventBody('parcel.created', bare)).toEqual({ body: bare, values: [] });
  });

  it('erases values from a stored answer in raw and JSON-escaped spellings, and a value cut off at its end', () => {
    const values = ['Two "shirts"', 'Amina Wanjiru'];
    expect(eraseValuesIn('got Two "shirts" and {"d":"Two \\"shirts\\""}', values, 500)).toBe(
      `got ${ERASED} and {"d":"${ERASED}"}`,
    );
    expect(eraseValuesIn('{"recipient_name":"Amina Wan', values, 500)).toBe(`{"recipient_name":"${ERASED}`);
    expect(eraseValuesIn('unrelated', values, 500)).toBe('unrelated');
    // Never longer than the stored answer may be.
    const long = `${'x'.repeat(495)}Amina`;
    expect([...eraseValuesIn(long, values, 500)]).toHaveLength(500);
  });
});
