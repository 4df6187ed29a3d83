// Sprig's URL functions (net/url: urlParse, urlJoin).
import { fail } from '../func.ts';
import { GoMap, utf8Text, goString, kindOf } from '../values.ts';

export function urlParse(v: string): GoMap {
  const text = utf8Text(v);
  const m = /^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(.*)$/s.exec(text)!;
  let scheme = m[1] ?? '';
  let rest = m[2]!;
  if (/[\x00-\x1f\x7f ]/.test(text) && /[\x00-\x1f\x7f]/.test(text))
    fail('unable to parse url: invalid control character in URL');
  if (!m[1] && /^[^/?#]*:/.test(text) && !text.startsWith('/')) fail('unable to parse url: missing protocol scheme');
  scheme = scheme.toLowerCase();
  let fragment = '';
  const hash = rest.indexOf('#');
  if (hash >= 0) {
    fragment = decodeURIComponentSafe(rest.slice(hash + 1));
    rest = rest.slice(0, hash);
  }
  let query = '';
  const q = rest.indexOf('?');
  if (q >= 0) {
    query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  let opaque = '';
  let host = '';
  let userinfo = '';
  let path = '';
  if (scheme && !rest.startsWith('/')) opaque = rest;
  else if (rest.startsWith('//')) {
    const after = rest.slice(2);
    const slash = after.indexOf('/');
    let authority = slash >= 0 ? after.slice(0, slash) : after;
    path = slash >= 0 ? after.slice(slash) : '';
    const at = authority.lastIndexOf('@');
    if (at >= 0) {
      userinfo = authority.slice(0, at);
      authority = authority.slice(at + 1);
    }
    host = authority;
  } else path = rest;
  path = decodeURIComponentSafe(path);
  const hostname = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d*$/, '');
  return new GoMap([
    ['scheme', goString(scheme)],
    ['host', goString(host)],
    ['hostname', goString(hostname)],
    ['path', goString(path)],
    ['query', goString(query)],
    ['opaque', goString(opaque)],
    ['fragment', goString(fragment)],
    ['userinfo', goString(userinfo)],
  ]);
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return fail('unable to parse url: invalid URL escape');
  }
}

export function urlJoin(d: GoMap): string {
  const get = (k: string): string => {
    if (!d.has(k)) return '';
    const v = d.get(k);
    if (typeof v !== 'string') fail(`unable to parse ${k} key, must be of type string, but ${kindOf(v)} found`);
    return v as string;
  };
  const scheme = get('scheme');
  const host = get('host');
  const path = get('path');
  const query = get('query');
  const opaque = get('opaque');
  const fragment = get('fragment');
  const userinfo = get('userinfo');
  let out = '';
  if (scheme) out += `${scheme}:`;
  if (opaque) out += opaque;
  else {
    if (scheme || host || userinfo) {
      if (host || path || userinfo) out += '//';
      if (userinfo) out += `${userinfo}@`;
      out += host;
    }
    if (path && !path.startsWith('/') && host) out += '/';
    out += path.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]/g, (c) =>
      [...Buffer.from(c, 'latin1')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
    );
  }
  if (query) out += `?${query}`;
  if (fragment)
    out += `#${fragment.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/?%]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)}`;
  return out;
}
