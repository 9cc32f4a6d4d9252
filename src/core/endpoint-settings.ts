import Type, { type Static, type TSchema } from 'typebox';
import { EVENT_TYPES } from './event-catalog';
import { API_VERSION_NAMES, LATEST_API_VERSION } from './versions';

/**
 * The settings of a webhook endpoint, each declared once, in ENDPOINT_SETTINGS: its API field (the name is the
 * key), its schemas in the endpoint record and in the create and update bodies, its stored column, its CLI option
 * and its field and fact on the developers page. What follows from it: the API's schemas (domain/endpoints.ts,
 * api/routes/webhooks.ts), the columns read and written (db/endpoints.ts), the record made from a row and the
 * audit's changed fields (domain/endpoints.ts), the CLI's options of `webhooks create|update`
 * (cli/commands/webhooks.ts) and the page's form and facts (dashboard/views/endpoints.ts,
 * dashboard/routes/endpoints.ts). A setting with rules of its own names them in `special`; their code stays with
 * the concept (domain/endpoint-headers.ts for the headers, infra/ssrf.ts for the url, domain/endpoint-lifecycle.ts
 * for pause and disable).
 */

export const DESCRIPTION_MAX_LENGTH = 500;

/** 'parcel': a parcel's events are posted one at a time, in sequence order (workflows/parcel-order.ts). */
export const ENDPOINT_ORDERINGS = ['none', 'parcel'] as const;
export type EndpointOrdering = (typeof ENDPOINT_ORDERINGS)[number];
export const ORDERING_DESCRIPTION =
  "parcel: a parcel's events are posted in sequence order, each once the one before it was delivered to this endpoint, abandoned, or skipped; other parcels are never held up. none (default): events go out as soon as they can.";

/** An endpoint's rate limit: deliveries per clock second, whole, within these bounds; null for none. */
export const RATE_LIMIT_MIN = 1;
export const RATE_LIMIT_MAX = 1000;

/** Custom headers' bounds (their checks: domain/endpoint-headers.ts). */
export const MAX_HEADERS = 20;
export const HEADER_NAME_MAX_LENGTH = 64;
export const HEADER_VALUE_MAX_LENGTH = 1000;
/** What a response shows instead of a credential's value. */
export const HIDDEN_VALUE = '********';

const HEADERS_DESCRIPTION =
  `Headers sent on every POST to this endpoint, name to value: at most ${MAX_HEADERS}; names are HTTP tokens of at most ` +
  `${HEADER_NAME_MAX_LENGTH} characters, values printable ASCII of at most ${HEADER_VALUE_MAX_LENGTH}. Host, Content-*, ` +
  'Connection, Transfer-Encoding, Keep-Alive, Upgrade, Expect, TE, Trailer, Proxy-*, Service-*, webhook-*, ' +
  'traceparent and tracestate are refused. The values of Authorization, Proxy-Authorization, Cookie and of names ' +
  `containing token, secret, key, password or auth are hidden: shown as "${HIDDEN_VALUE}", and dropped when the ` +
  'url changes to another origin (scheme, host or port) unless the same request sets them again.';

/** The record's `headers`, always present. */
export const HeadersRecord = Type.Record(Type.String(), Type.String(), { description: HEADERS_DESCRIPTION });
/** In a body: on registration the whole set; on PATCH a change, where null removes a name. */
export const HeadersInput = Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]), {
  description: HEADERS_DESCRIPTION,
});

/** An endpoint's `api_version` in a request: checked by the domain, so an unknown one is unknown_api_version. */
export function ApiVersionField(description: string) {
  return Type.String({
    maxLength: 100,
    description: `${description} One of ${API_VERSION_NAMES.join(', ')}.`,
    examples: [LATEST_API_VERSION],
  });
}

const Ordering = Type.Union([Type.Literal('none'), Type.Literal('parcel')], { description: ORDERING_DESCRIPTION });
const RateLimit = (description: string) =>
  Type.Union([Type.Integer({ minimum: RATE_LIMIT_MIN, maximum: RATE_LIMIT_MAX }), Type.Null()], { description });

/** How a stored column is written: its SQL type (a parameter's cast). */
export type ColumnType = 'text' | 'text[]' | 'integer' | 'timestamptz';

/**
 * A setting's column. `row`: its field in a row when that is not the setting's name; `select`: the expression
 * read when it is not the column itself. `T` is the row field's type.
 */
export interface ColumnSpec<T = unknown> {
  name: string;
  type: ColumnType;
  row?: string;
  select?: string;
  /** Never written from a body: set by its own statements (`special` names them). */
  readOnly?: boolean;
  /** The row field's type; never set at run time. */
  readonly rowType?: T;
}

/** A column whose row field is a `T`: `column<string>()({ name: 'url', type: 'text' })` (the spec keeps its literals). */
const column =
  <T>() =>
  <const S extends Omit<ColumnSpec<T>, 'rowType'>>(spec: S): S & ColumnSpec<T> =>
    spec;

/** How the CLI reads an option's text (cli/commands/webhooks.ts): as is, a comma list, a limit or none, headers. */
export type CliParse = 'text' | 'list' | 'rateLimit' | 'headers';

export interface CliSpec {
  /** Commander's flag, `--name <value>`; the option key is its camel-cased name. */
  flag: string;
  parse: CliParse;
  /** Help text of `webhooks create` and of `webhooks update`. */
  create: string;
  update: string;
  /** Given more than once, each one kept. */
  repeatable?: boolean;
}

/** How the page's form asks for a setting (dashboard/views/endpoints.ts renders each kind). */
export type FormInput = 'text' | 'url' | 'checkboxes' | 'checkbox' | 'lines' | 'select';

export interface FormSpec {
  /** The control's id after its form's prefix (`add-rate-limit`). */
  id: string;
  input: FormInput;
  /** A checkbox's value when ticked, and the setting's value when not. */
  checked?: string;
  unchecked?: string;
  label: string;
  hint?: string;
  placeholder?: string;
  maxLength?: number;
  required?: boolean;
}

export interface PageSpec {
  /** Its row in the endpoint page's facts; absent: shown elsewhere (the heading, beside the status). */
  fact?: string;
  form?: FormSpec;
}

export type Special = 'url' | 'headers' | 'lifecycle' | 'status';

export interface EndpointSetting {
  /** Its field in the endpoint record (absent: not shown as itself). */
  record?: TSchema;
  /** Its field in a registration's body (absent: not set at registration). */
  create?: TSchema;
  /** Its field in a PATCH body (absent: not changed there). */
  update?: TSchema;
  column: ColumnSpec;
  cli?: CliSpec;
  page?: PageSpec;
  /** Rules of its own, kept with their concept (named in the header of this file). */
  special?: Special;
}

export const ENDPOINT_SETTINGS = {
  status: {
    record: Type.Union(
      [Type.Literal('enabled'), Type.Literal('failing'), Type.Literal('paused'), Type.Literal('disabled')],
      {
        description:
          'disabled: receives nothing (disabled_reason says why). paused: by its owner; new events and retries are held, not attempted, and go out on resume. failing: deliveries keep being abandoned (cleared by a success).',
      },
    ),
    // The health mark (endpoint health sets it); the record shows disabled over paused over it.
    column: column<'enabled' | 'failing'>()({ name: 'status', type: 'text', readOnly: true }),
    page: { fact: 'Status' },
    special: 'status',
  },
  url: {
    record: Type.String(),
    create: Type.String({ description: 'https URL that receives the events (at most 2048 characters).' }),
    update: Type.Optional(Type.String({ description: 'New https URL; checked as at registration.' })),
    column: column<string>()({ name: 'url', type: 'text' }),
    cli: {
      flag: '--url <url>',
      parse: 'text',
      create: 'https URL that receives the events',
      update:
        'new https URL; on another scheme, host or port the hidden headers (credentials) are dropped unless --header sets them again',
    },
    page: {
      form: {
        id: 'url',
        input: 'url',
        label: 'Endpoint URL',
        required: true,
        placeholder: 'https://shop.example/webhooks/parcel',
        hint: 'A public https address. We sign every request; verify the Service-Signature header.',
        maxLength: 2048,
      },
    },
    special: 'url',
  },
  description: {
    record: Type.Union([Type.String(), Type.Null()]),
    create: Type.Optional(
      Type.String({
        maxLength: DESCRIPTION_MAX_LENGTH,
        description: `Optional label, at most ${DESCRIPTION_MAX_LENGTH} characters.`,
      }),
    ),
    update: Type.Optional(
      Type.Union([Type.String({ maxLength: DESCRIPTION_MAX_LENGTH }), Type.Null()], {
        description: 'Label; null clears it.',
      }),
    ),
    column: column<string | null>()({ name: 'description', type: 'text' }),
    cli: { flag: '--description <text>', parse: 'text', create: 'a label', update: 'a label' },
    page: {
      fact: 'Description',
      form: { id: 'description', input: 'text', label: 'Description', maxLength: DESCRIPTION_MAX_LENGTH },
    },
  },
  rate_limit: {
    record: RateLimit(
      `Deliveries per clock second at most (${RATE_LIMIT_MIN} to ${RATE_LIMIT_MAX}), across all workers; null: no limit.`,
    ),
    create: Type.Optional(
      RateLimit(
        `Deliveries per clock second at most, ${RATE_LIMIT_MIN} to ${RATE_LIMIT_MAX}, across all workers. Omitted or null: no limit.`,
      ),
    ),
    update: Type.Optional(
      RateLimit(`Deliveries per clock second at most, ${RATE_LIMIT_MIN} to ${RATE_LIMIT_MAX}; null removes the limit.`),
    ),
    column: column<number | null>()({ name: 'rate_limit', type: 'integer' }),
    cli: {
      flag: '--rate-limit <n>',
      parse: 'rateLimit',
      create: `at most n deliveries per second, ${RATE_LIMIT_MIN} to ${RATE_LIMIT_MAX} (default no limit)`,
      update: `at most n deliveries per second, ${RATE_LIMIT_MIN} to ${RATE_LIMIT_MAX}; none removes the limit`,
    },
    page: {
      fact: 'Rate limit (per second)',
      form: {
        id: 'rate-limit',
        input: 'text',
        label: 'Rate limit (per second)',
        maxLength: 4,
        hint: `At most this many deliveries per second, ${RATE_LIMIT_MIN} to ${RATE_LIMIT_MAX}; later ones wait their turn. Empty: no limit.`,
      },
    },
  },
  events: {
    record: Type.Array(Type.String(), {
      description: 'The kinds this endpoint receives; every current kind when it was registered without a list.',
    }),
    create: Type.Optional(
      Type.Array(Type.String(), {
        description: `Event kinds to receive, among ${EVENT_TYPES.join(', ')}. Omitted or empty: every kind.`,
      }),
    ),
    update: Type.Optional(Type.Array(Type.String(), { description: 'Event kinds to receive; empty: every kind.' })),
    column: column<string[]>()({ name: 'events', type: 'text[]' }),
    cli: {
      flag: '--events <kinds>',
      parse: 'list',
      create: `comma-separated event kinds (default every kind): ${EVENT_TYPES.join(', ')}`,
      update: 'comma-separated event kinds; empty: every kind',
    },
    page: {
      fact: 'Events',
      form: {
        id: 'event',
        input: 'checkboxes',
        label: 'Events to send',
        hint: 'Leave every box empty to receive every kind, including kinds added later.',
      },
    },
  },
  ordering: {
    record: Ordering,
    create: Type.Optional(Ordering),
    update: Type.Optional(Ordering),
    column: column<EndpointOrdering>()({ name: 'ordering', type: 'text' }),
    cli: {
      flag: '--ordering <ordering>',
      parse: 'text',
      create: "none (default) or parcel: a parcel's events one at a time, in sequence order",
      update: 'none or parcel',
    },
    page: {
      fact: 'Order',
      form: {
        id: 'ordering',
        input: 'checkbox',
        checked: 'parcel',
        unchecked: 'none',
        label: 'Deliver in order per parcel',
        hint: "A parcel's next event is sent only once the one before it was delivered or given up. Other parcels are never held up.",
      },
    },
  },
  headers: {
    record: HeadersRecord,
    create: Type.Optional(HeadersInput),
    update: Type.Optional(HeadersInput),
    // Stored as '{}' or one sealed JSON object (domain/endpoint-headers.ts).
    column: column<string>()({
      name: 'headers',
      type: 'text',
      row: 'stored_headers',
      select: 'headers AS stored_headers',
    }),
    cli: {
      flag: '--header <header>',
      parse: 'headers',
      repeatable: true,
      create: 'a header sent on every POST, "Name: value" (repeatable)',
      update: 'set a header sent on every POST, "Name: value"; "Name:" removes it (repeatable)',
    },
    page: {
      form: {
        id: 'headers',
        input: 'lines',
        label: 'Custom headers',
        hint: `One "Name: value" per line, sent on every delivery (at most ${MAX_HEADERS}). "Name:" alone removes a header; headers not listed stay. Values of Authorization, Proxy-Authorization, Cookie and of names with token, secret, key, password or auth are hidden: never shown again. Changing the URL to another host drops the hidden headers (credentials) unless you enter them again.`,
      },
    },
    special: 'headers',
  },
  api_version: {
    record: Type.String({
      description: `The API version its events are rendered in (${API_VERSION_NAMES.join(', ')}; the newest, ${LATEST_API_VERSION}, unless another was named). A change applies to deliveries made after it.`,
    }),
    create: Type.Optional(ApiVersionField('The API version its events are rendered in; omitted: the newest.')),
    update: Type.Optional(
      ApiVersionField('The API version of deliveries made from now on (test events, resends and recoveries included).'),
    ),
    column: column<string>()({ name: 'api_version', type: 'text' }),
    cli: {
      flag: '--api-version <version>',
      parse: 'text',
      create: `the API version its events are rendered in: ${API_VERSION_NAMES.join(', ')} (default ${LATEST_API_VERSION})`,
      update: `the API version of deliveries made from now on: ${API_VERSION_NAMES.join(', ')}`,
    },
    page: {
      fact: 'API version',
      form: {
        id: 'api-version',
        input: 'select',
        label: 'API version',
        hint: 'The shape of the events this endpoint receives (sent as the Service-Version header). A change applies to deliveries made after it.',
      },
    },
  },
  disabled: {
    // Shown as status 'disabled'; the page disables and enables with its own buttons.
    update: Type.Optional(
      Type.Boolean({
        description: 'true: receives nothing and its pending retries stop. false: enabled again, nothing replayed.',
      }),
    ),
    column: column<boolean>()({
      name: 'disabled_at',
      type: 'timestamptz',
      row: 'disabled',
      select: 'disabled_at IS NOT NULL AS disabled',
      readOnly: true,
    }),
    special: 'lifecycle',
  },
  disabled_reason: {
    record: Type.Union([Type.Literal('gone'), Type.Null()], {
      description:
        'gone: disabled by the engine because it answered 410 Gone (its pending deliveries ended skipped). null: not disabled, or disabled by its owner.',
    }),
    column: column<'gone' | null>()({ name: 'disabled_reason', type: 'text', readOnly: true }),
    special: 'lifecycle',
  },
  paused_at: {
    record: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Unix seconds it was paused at (POST /v1/webhooks/:id/pause); null when it is not paused.',
    }),
    column: column<Date | null>()({ name: 'paused_at', type: 'timestamptz', readOnly: true }),
    special: 'lifecycle',
  },
} as const satisfies Record<string, EndpointSetting>;

type Settings = typeof ENDPOINT_SETTINGS;
export type EndpointSettingName = keyof Settings;

/** The settings that have `part`. */
export type SettingsWith<P extends keyof EndpointSetting> = {
  [K in EndpointSettingName]: Settings[K] extends { readonly [Q in P]: unknown } ? K : never;
}[EndpointSettingName];

/** The settings a body writes to their column: every one with create or update, its column not read-only. */
export type WritableSettingName = {
  [K in EndpointSettingName]: Settings[K]['column'] extends { readOnly: true }
    ? never
    : K extends SettingsWith<'create'> | SettingsWith<'update'>
      ? K
      : never;
}[EndpointSettingName];

export const SETTING_NAMES = Object.keys(ENDPOINT_SETTINGS) as EndpointSettingName[];

/** The settings that have `part`, in declaration order. */
export function settingsWith<P extends keyof EndpointSetting>(part: P): SettingsWith<P>[] {
  return SETTING_NAMES.filter(
    (name) => (ENDPOINT_SETTINGS[name] as EndpointSetting)[part] !== undefined,
  ) as SettingsWith<P>[];
}

/** Each setting's schema of one part (record, create or update), keyed by its API field: a TypeBox object's properties. */
export function settingSchemas<P extends 'record' | 'create' | 'update'>(
  part: P,
): { [K in SettingsWith<P>]: Settings[K] extends { readonly [Q in P]: infer S } ? S : never } {
  return Object.fromEntries(
    settingsWith(part).map((name) => [name, (ENDPOINT_SETTINGS[name] as EndpointSetting)[part]]),
  ) as never;
}

/** A setting's field in a row: its `column.row`, else its name. */
type RowFieldOf<K extends EndpointSettingName> = Settings[K]['column'] extends { row: infer R extends string } ? R : K;

/** The row fields the settings' columns give, each with its type. */
export type SettingsRow = {
  [K in EndpointSettingName as RowFieldOf<K>]: Settings[K]['column'] extends ColumnSpec<infer T> ? T : never;
};

export function rowField(name: EndpointSettingName): string {
  const spec: ColumnSpec = ENDPOINT_SETTINGS[name].column;
  return spec.row ?? name;
}

/** What a read selects for the settings, in declaration order: `status, url, ..., headers AS stored_headers, ...`. */
export function settingColumnsSelected(): string {
  return SETTING_NAMES.map((name) => {
    const spec: ColumnSpec = ENDPOINT_SETTINGS[name].column;
    return spec.select ?? spec.name;
  }).join(', ');
}

/**
 * A body's values by setting, as db/endpoints.ts writes them to their columns: one left out keeps its column as it
 * is (an insert, its default).
 */
export type SettingColumnValues = Partial<Record<WritableSettingName, unknown>>;

export const WRITABLE_SETTINGS = SETTING_NAMES.filter(
  (name) =>
    !(ENDPOINT_SETTINGS[name].column as ColumnSpec).readOnly &&
    ((ENDPOINT_SETTINGS[name] as EndpointSetting).create !== undefined ||
      (ENDPOINT_SETTINGS[name] as EndpointSetting).update !== undefined),
) as WritableSettingName[];

/** The record's fields of the settings, typed: what the views render (dashboard/views/models.ts). */
export type SettingsRecord = {
  [K in SettingsWith<'record'>]: Settings[K] extends { readonly record: infer S extends TSchema } ? Static<S> : never;
};

/** The settings the page's form asks for, and those its facts show. */
export type FormSettingName = {
  [K in EndpointSettingName]: Settings[K] extends { readonly page: { readonly form: FormSpec } } ? K : never;
}[EndpointSettingName];
export type FactSettingName = {
  [K in EndpointSettingName]: Settings[K] extends { readonly page: { readonly fact: string } } ? K : never;
}[EndpointSettingName];

export const FORM_SETTINGS = SETTING_NAMES.filter(
  (name) => (ENDPOINT_SETTINGS[name] as EndpointSetting).page?.form !== undefined,
) as FormSettingName[];
export const FACT_SETTINGS = SETTING_NAMES.filter(
  (name) => (ENDPOINT_SETTINGS[name] as EndpointSetting).page?.fact !== undefined,
) as FactSettingName[];

export function formSpec(name: FormSettingName): FormSpec {
  return ENDPOINT_SETTINGS[name].page.form;
}

export function factLabel(name: FactSettingName): string {
  return ENDPOINT_SETTINGS[name].page.fact;
}

/** What a form field holds as typed: a box ticked or not, the boxes ticked, or text. */
type FormValueOf<K extends FormSettingName> = Settings[K] extends {
  readonly page: { readonly form: { readonly input: infer I } };
}
  ? I extends 'checkbox'
    ? boolean
    : I extends 'checkboxes'
      ? string[]
      : string
  : never;

/** The form's values by field name, as typed (or as the endpoint has them); absent: empty. */
export type SettingsFormValues = { [K in FormSettingName]?: FormValueOf<K> };
