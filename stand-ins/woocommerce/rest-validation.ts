/**
 * WordPress's REST request validation, as the WooCommerce stand-in needs it:
 * `is_email()` (wp-includes/formatting.php), `rest_validate_value_from_schema()`
 * and `WP_REST_Request::has_valid_params()` (wp-includes/rest-api.php,
 * class-wp-rest-request.php), written from the PHP so the stand-in refuses
 * what a real store refuses, with its codes and messages.
 *
 * The service has its own copy of the email rule (lib/checkout/email.ts) and
 * shares nothing with this file: the contract tests prove the two agree.
 * Not part of the production bundle.
 */

/** A WP_Error as rest_convert_error_to_response() shows it: `data` is null when the error carries none. */
export interface WpErrorBody {
  code: string;
  message: string;
  data: unknown;
}

/** The parts of a JSON schema WordPress validates that WooCommerce's order, refund and note routes use. */
export interface ArgSchema {
  type: 'string' | 'integer' | 'boolean' | 'object' | 'array' | 'null' | 'mixed' | readonly ('string' | 'null')[];
  format?: 'email';
  enum?: readonly string[];
  properties?: Record<string, ArgSchema>;
  items?: ArgSchema;
  minimum?: number;
  maximum?: number;
}

/** PHP's trim() with an explicit character list. */
function phpTrim(value: string, characters: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && characters.includes(value[start]!)) start += 1;
  while (end > start && characters.includes(value[end - 1]!)) end -= 1;
  return value.slice(start, end);
}

/** preg_match without the D modifier: `$` also matches before a final newline. */
function pcreMatches(pattern: RegExp, value: string): boolean {
  return pattern.test(value) || (value.endsWith('\n') && pattern.test(value.slice(0, -1)));
}

const WHITESPACE = ' \t\n\r\0\x0B';

/** WordPress's is_email(), step by step (no plugin filters). */
export function isEmail(email: string): boolean {
  // strlen() counts bytes.
  if (Buffer.byteLength(email, 'utf8') < 6) return false;
  // An @ after the first position.
  if (email.indexOf('@', 1) === -1) return false;
  const at = email.indexOf('@');
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (!pcreMatches(/^[a-zA-Z0-9!#$%&'*+/=?^_`{|}~.-]+$/, local)) return false;
  if (/\.{2,}/.test(domain)) return false;
  if (phpTrim(domain, `${WHITESPACE}.`) !== domain) return false;
  const subs = domain.split('.');
  if (subs.length < 2) return false;
  for (const sub of subs) {
    if (phpTrim(sub, `${WHITESPACE}-`) !== sub) return false;
    if (!pcreMatches(/^[a-zA-Z0-9-]+$/, sub)) return false;
  }
  return true;
}

/** PHP's is_numeric() for the values a JSON body or a query string can carry. */
function isNumeric(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  return typeof value === 'string' && /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/.test(value);
}

/** rest_is_object(): an empty string and any PHP array (JSON object or list) count as objects. */
function isRestObject(value: unknown): boolean {
  return value === '' || (typeof value === 'object' && value !== null);
}

/** rest_is_array(): a list, an object with only numeric keys, or a scalar (wp_parse_list splits it). */
function isRestArray(value: unknown): boolean {
  if (Array.isArray(value)) return true;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return true;
  return typeof value === 'object' && value !== null && Object.keys(value).every((key) => /^\d+$/.test(key));
}

/** rest_is_boolean(). */
export function isRestBoolean(value: unknown): boolean {
  if (typeof value === 'boolean') return true;
  if (typeof value === 'string') return ['false', 'true', '0', '1'].includes(value.toLowerCase());
  if (typeof value === 'number') return value === 0 || value === 1;
  return false;
}

/** wp_sprintf()'s `%l`: "a, b, and c", "a and b". */
function listOf(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  if (items.length === 2) return `${items[0]} and ${items[1]}`;
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;
}

const invalidType = (param: string, type: string): WpErrorBody => ({
  code: 'rest_invalid_type',
  message: `${param} is not of type ${type}.`,
  data: { param },
});

function itemsOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value === 'object' && value !== null) return Object.values(value);
  // wp_parse_list().
  return String(value)
    .split(/[\s,]+/)
    .filter((part) => part !== '');
}

/** rest_validate_value_from_schema(): undefined when valid, else the first error, as WordPress returns it. */
export function validateValue(value: unknown, schema: ArgSchema, param: string): WpErrorBody | undefined {
  let type = schema.type;
  if (Array.isArray(type)) {
    // rest_handle_multi_type_schema() picks the first type the value has.
    const best = type.find((candidate) => (candidate === 'null' ? value === null : typeof value === 'string'));
    if (best === undefined) return invalidType(param, type.join(','));
    type = best;
  }
  switch (type) {
    case 'null':
      if (value !== null) return invalidType(param, 'null');
      break;
    case 'boolean':
      if (!isRestBoolean(value)) return invalidType(param, 'boolean');
      break;
    case 'string':
      if (typeof value !== 'string') return invalidType(param, 'string');
      break;
    case 'integer': {
      if (!isNumeric(value)) return invalidType(param, 'integer');
      const number = Number(value);
      if (!Number.isInteger(number)) return invalidType(param, 'integer');
      const { minimum, maximum } = schema;
      if (minimum !== undefined && maximum !== undefined && (number < minimum || number > maximum)) {
        return { code: 'rest_out_of_bounds', message: `${param} must be between ${minimum} (inclusive) and ${maximum} (inclusive)`, data: null };
      }
      if (minimum !== undefined && maximum === undefined && number < minimum) {
        return { code: 'rest_out_of_bounds', message: `${param} must be greater than or equal to ${minimum}`, data: null };
      }
      break;
    }
    case 'object': {
      if (!isRestObject(value)) return invalidType(param, 'object');
      const entries = value === '' ? [] : Object.entries(value as Record<string, unknown>);
      for (const [property, child] of entries) {
        const childSchema = schema.properties?.[property];
        if (!childSchema) continue;
        const error = validateValue(child, childSchema, `${param}[${property}]`);
        if (error) return error;
      }
      break;
    }
    case 'array': {
      if (!isRestArray(value)) return invalidType(param, 'array');
      if (schema.items) {
        const items = itemsOf(value);
        for (const [index, item] of items.entries()) {
          const error = validateValue(item, schema.items, `${param}[${index}]`);
          if (error) return error;
        }
      }
      break;
    }
    default:
      break;
  }
  if (schema.enum && !schema.enum.includes(String(value))) {
    const message = schema.enum.length === 1 ? `${param} is not ${schema.enum[0]}.` : `${param} is not one of ${listOf(schema.enum)}.`;
    return { code: 'rest_not_in_enum', message, data: null };
  }
  if (schema.format === 'email' && type === 'string' && !isEmail(value as string)) {
    return { code: 'rest_invalid_email', message: 'Invalid email address.', data: null };
  }
  return undefined;
}

/**
 * WP_REST_Request::has_valid_params(): every registered argument that is present (not null) is
 * validated, in registration order; all failures are reported together.
 */
export function invalidParams(
  params: Record<string, unknown>,
  args: Record<string, ArgSchema>,
): { message: string; params: Record<string, string>; details: Record<string, WpErrorBody> } | undefined {
  const failed: Record<string, string> = {};
  const details: Record<string, WpErrorBody> = {};
  for (const [key, schema] of Object.entries(args)) {
    const value = params[key];
    if (value === undefined || value === null) continue;
    const error = validateValue(value, schema, key);
    if (error) {
      failed[key] = error.message;
      details[key] = error;
    }
  }
  const keys = Object.keys(failed);
  if (keys.length === 0) return undefined;
  return { message: `Invalid parameter(s): ${keys.join(', ')}`, params: failed, details };
}

/** Whether a decoded JSON value holds a lone UTF-16 surrogate anywhere (PHP's json_decode refuses the body then). */
export function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return /\p{Cs}/u.test(value);
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).some(([key, child]) => hasLoneSurrogate(key) || hasLoneSurrogate(child));
  }
  return false;
}
