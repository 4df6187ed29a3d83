// Go's encoding/pem: Decode and Encode, byte for byte as Go reads and writes blocks (ESO's filterPEM
// and filterCertChain, and Sprig's buildCustomCert read PEM through it).

export interface PemBlock {
  type: string;
  headers: Map<string, string>;
  bytes: Buffer;
}

function getLine(data: string): [string, string] {
  const i = data.indexOf('\n');
  const line = i < 0 ? data : data.slice(0, i);
  const rest = i < 0 ? '' : data.slice(i + 1);
  return [line.replace(/[ \t\r]+$/, ''), rest];
}

const STD_B64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** pem.Decode: the first PEM block in `data` and the rest, or undefined and all of `data`. */
export function pemDecode(data: string): { block?: PemBlock; rest: string } {
  let rest = data;
  for (;;) {
    if (rest.startsWith('-----BEGIN ')) rest = rest.slice('-----BEGIN '.length);
    else {
      const i = rest.indexOf('\n-----BEGIN ');
      if (i < 0) return { rest: data };
      rest = rest.slice(i + '\n-----BEGIN '.length);
    }
    let typeLine: string;
    [typeLine, rest] = getLine(rest);
    if (!typeLine.endsWith('-----')) continue;
    typeLine = typeLine.slice(0, -5);
    const headers = new Map<string, string>();
    let exhausted = false;
    for (;;) {
      if (rest.length === 0) {
        exhausted = true;
        break;
      }
      const [line, next] = getLine(rest);
      const c = line.indexOf(':');
      if (c < 0) break;
      headers.set(line.slice(0, c).trim(), line.slice(c + 1).trim());
      rest = next;
    }
    if (exhausted) return { rest: data };
    let endIndex: number;
    let endTrailerIndex: number;
    if (headers.size === 0 && rest.startsWith('-----END ')) {
      endIndex = 0;
      endTrailerIndex = '-----END '.length;
    } else {
      endIndex = rest.indexOf('\n-----END ');
      endTrailerIndex = endIndex + '\n-----END '.length;
    }
    if (endIndex < 0) continue;
    let endTrailer = rest.slice(endTrailerIndex);
    const trailerLen = typeLine.length + 5;
    if (endTrailer.length < trailerLen) continue;
    const restOfEndLine = endTrailer.slice(trailerLen);
    endTrailer = endTrailer.slice(0, trailerLen);
    if (!endTrailer.startsWith(typeLine) || !endTrailer.endsWith('-----')) continue;
    if (getLine(restOfEndLine)[0].length !== 0) continue;
    const b64 = rest
      .slice(0, endIndex)
      .replace(/[ \t]/g, '')
      .replace(/[\r\n]/g, '');
    if (b64.length % 4 !== 0 || !STD_B64.test(b64)) continue;
    const bytes = Buffer.from(b64, 'base64');
    rest = getLine(rest.slice(endIndex + '\n-----END '.length - 1))[1];
    return { block: { type: typeLine, headers, bytes }, rest };
  }
}

/** pem.Encode. */
export function pemEncode(type: string, bytes: Buffer, headers: ReadonlyMap<string, string> = new Map()): string {
  let out = `-----BEGIN ${type}-----\n`;
  if (headers.size > 0) {
    const keys = [...headers.keys()].sort((a, b) =>
      a === 'Proc-Type' ? -1 : b === 'Proc-Type' ? 1 : a < b ? -1 : a > b ? 1 : 0,
    );
    for (const k of keys) out += `${k}: ${headers.get(k)!}\n`;
    out += '\n';
  }
  const b64 = bytes.toString('base64');
  for (let i = 0; i < b64.length; i += 64) out += `${b64.slice(i, i + 64)}\n`;
  return `${out}-----END ${type}-----\n`;
}
