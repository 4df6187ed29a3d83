// RC2 decryption (RFC 2268) for PKCS#12's PBE-SHA1-RC2 (older "legacy" exports: Java keytool before
// JDK 12, OpenSSL 1.x, go-pkcs12's Legacy encoder). Node's OpenSSL 3 has no RC2, so this follows
// go-pkcs12's internal/rc2 (expandKey with the effective key bits, the 16 unmix/unmash rounds).

// RFC 2268's PITABLE, laid out as the RFC prints it (16 bytes a row) so it can be checked against it.
const PI_TABLE = Buffer.from(
  `
  d9 78 f9 c4 19 dd b5 ed 28 e9 fd 79 4a a0 d8 9d
  c6 7e 37 83 2b 76 53 8e 62 4c 64 88 44 8b fb a2
  17 9a 59 f5 87 b3 4f 13 61 45 6d 8d 09 81 7d 32
  bd 8f 40 eb 86 b7 7b 0b f0 95 21 22 5c 6b 4e 82
  54 d6 65 93 ce 60 b2 1c 73 56 c0 14 a7 8c f1 dc
  12 75 ca 1f 3b be e4 d1 42 3d d4 30 a3 3c b6 26
  6f bf 0e da 46 69 07 57 27 f2 1d 9b bc 94 43 03
  f8 11 c7 f6 90 ef 3e e7 06 c3 d5 2f c8 66 1e d7
  08 e8 ea de 80 52 ee f7 84 aa 72 ac 35 4d 6a 2a
  96 1a d2 71 5a 15 49 74 4b 9f d0 5e 04 18 a4 ec
  c2 e0 41 6e 0f 51 cb cc 24 91 af 50 a1 f4 70 39
  99 7c 3a 85 23 b8 b4 7a fc 02 36 5b 25 55 97 31
  2d 5d fa 98 e3 8a 92 ae 05 df 29 10 67 6c ba c9
  d3 00 e6 cf e1 9e a8 2c 63 16 01 3f 58 e2 89 a9
  0d 38 34 1b ab 33 ff b0 bb 48 0c 5f b9 b1 cd 2e
  c5 f3 db 47 e5 a5 9c 77 0a a6 20 68 fe 7f c1 ad
`.replace(/\s+/g, ''),
  'hex',
);

/** RC2 key expansion: the 64 16-bit subkeys for a key of `bits` effective bits. */
export function rc2ExpandKey(key: Uint8Array, bits: number): Uint16Array {
  const l = new Uint8Array(128);
  l.set(key.subarray(0, 128));
  const t = key.length;
  const t8 = Math.floor((bits + 7) / 8);
  const tm = 255 % (1 << (8 + bits - 8 * t8));
  for (let i = t; i < 128; i++) l[i] = PI_TABLE[(l[i - 1]! + l[(i - t) & 0xff]!) & 0xff]!;
  l[128 - t8] = PI_TABLE[l[128 - t8]! & tm]!;
  for (let i = 127 - t8; i >= 0; i--) l[i] = PI_TABLE[l[i + 1]! ^ l[i + t8]!]!;
  const k = new Uint16Array(64);
  for (let i = 0; i < 64; i++) k[i] = l[2 * i]! + l[2 * i + 1]! * 256;
  return k;
}

const rotl16 = (x: number, b: number): number => ((x >>> (16 - b)) | (x << b)) & 0xffff;

function decryptBlock(k: Uint16Array, src: Buffer, at: number, dst: Buffer): void {
  let r0 = src.readUInt16LE(at);
  let r1 = src.readUInt16LE(at + 2);
  let r2 = src.readUInt16LE(at + 4);
  let r3 = src.readUInt16LE(at + 6);
  let j = 63;
  const unmix = (stop: number): void => {
    while (j >= stop) {
      r3 = (rotl16(r3, 11) - k[j]! - (r2 & r1) - (~r2 & r0)) & 0xffff;
      j--;
      r2 = (rotl16(r2, 13) - k[j]! - (r1 & r0) - (~r1 & r3)) & 0xffff;
      j--;
      r1 = (rotl16(r1, 14) - k[j]! - (r0 & r3) - (~r0 & r2)) & 0xffff;
      j--;
      r0 = (rotl16(r0, 15) - k[j]! - (r3 & r2) - (~r3 & r1)) & 0xffff;
      j--;
    }
  };
  const unmash = (): void => {
    r3 = (r3 - k[r2 & 63]!) & 0xffff;
    r2 = (r2 - k[r1 & 63]!) & 0xffff;
    r1 = (r1 - k[r0 & 63]!) & 0xffff;
    r0 = (r0 - k[r3 & 63]!) & 0xffff;
  };
  unmix(44);
  unmash();
  unmix(20);
  unmash();
  unmix(0);
  dst.writeUInt16LE(r0, at);
  dst.writeUInt16LE(r1, at + 2);
  dst.writeUInt16LE(r2, at + 4);
  dst.writeUInt16LE(r3, at + 6);
}

/** RC2-CBC decryption without padding removal (the caller checks it). `data` is whole 8-byte blocks. */
export function rc2CbcDecrypt(key: Uint8Array, bits: number, iv: Uint8Array, data: Buffer): Buffer {
  const k = rc2ExpandKey(key, bits);
  const out = Buffer.alloc(data.length);
  let prev: Uint8Array = Buffer.from(iv);
  for (let at = 0; at < data.length; at += 8) {
    decryptBlock(k, data, at, out);
    for (let i = 0; i < 8; i++) out[at + i] = out[at + i]! ^ prev[i]!;
    prev = data.subarray(at, at + 8);
  }
  return out;
}
