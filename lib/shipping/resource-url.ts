/** Which `resource_url` the service will read, refused before any connection (docs/decisions.md#d11). */
import { RESOURCE_URL_REFUSALS, type ResourceUrlRefusal } from '@/lib/errors';

export function isResourceUrlRefusal(failure: string): failure is ResourceUrlRefusal {
  return (RESOURCE_URL_REFUSALS as readonly string[]).includes(failure);
}

export type ResourceUrlCheck = { allowed: true; url: URL } | { allowed: false; reason: ResourceUrlRefusal; origin?: string };

const MAX_RESOURCE_URL_LENGTH = 2048;

export function checkResourceUrl(resourceUrl: string, apiBaseUrl: string): ResourceUrlCheck {
  if (resourceUrl.length > MAX_RESOURCE_URL_LENGTH || !URL.canParse(resourceUrl)) {
    return { allowed: false, reason: 'malformed' };
  }
  const url = new URL(resourceUrl);
  const base = new URL(apiBaseUrl);
  // URL.origin is normalized: scheme and host lower-cased, default ports dropped.
  if (url.origin !== base.origin) {
    return { allowed: false, reason: 'foreign_origin', origin: url.origin.slice(0, 200) };
  }
  if (url.username !== '' || url.password !== '') return { allowed: false, reason: 'credentials_in_url' };
  const basePath = base.pathname.replace(/\/+$/, '');
  if (basePath !== '' && url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`)) {
    return { allowed: false, reason: 'outside_base_path' };
  }
  url.hash = '';
  return { allowed: true, url };
}
