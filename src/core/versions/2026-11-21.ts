import type { ApiVersion } from './types';

/** The first version: the event shapes merchants started with (docs/events.md lists what later ones changed). */
export const VERSION_2026_11_21: ApiVersion = {
  name: '2026-11-21',
  why: 'The first version: eight kinds, a parcel event carries the parcel in data.parcel, a settlement names its parcel inside data.cod_settlement.',
  changes: [],
  sunset: null,
};
