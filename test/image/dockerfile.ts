// Reads the runtime stage of the repository's Dockerfile (the published build) into a description the
// Docker-free image builder reproduces: base Node major, ENV, WORKDIR, what COPY puts where (owner,
// mode), RUN ln -s links, USER, ENTRYPOINT, CMD. Anything else in that stage is refused by line, so a
// Dockerfile change the builder cannot reproduce fails loudly instead of drifting.
import { readFileSync } from 'node:fs';

export interface DockerCopy {
  /** Path in the build stage (e.g. /src/dist/). */
  src: string;
  /** Path in the image (e.g. /app/dist/). */
  dst: string;
  chown?: string;
  chmod?: string;
}

export interface RuntimeStage {
  /** FROM of the runtime stage, e.g. node:20-bookworm-slim */
  base: string;
  /** Major version of the Node base image (node:<major>-…). */
  nodeMajor: number;
  env: Record<string, string>;
  workdir: string;
  copies: DockerCopy[];
  /** `RUN ln -s <target> <path>` */
  symlinks: Array<{ target: string; path: string }>;
  user: string;
  entrypoint: string[];
  cmd: string[];
  /** WORKDIR of the build stage: where its COPY . . put the repository (e.g. /src). */
  buildWorkdir: string;
}

interface Instruction {
  line: number;
  op: string;
  args: string;
}

function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let buf = '';
  let start = 0;
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (!buf && (line === '' || line.startsWith('#'))) continue;
    if (!buf) start = i + 1;
    if (line.endsWith('\\')) {
      buf += `${line.slice(0, -1)} `;
      continue;
    }
    buf += line;
    const m = /^(\w+)\s+(.*)$/s.exec(buf);
    if (m?.[1] && m[2] !== undefined) out.push({ line: start, op: m[1].toUpperCase(), args: m[2].trim() });
    buf = '';
  }
  return out;
}

const jsonArray = (ins: Instruction): string[] => {
  const v = JSON.parse(ins.args) as unknown;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
    throw new Error(`Dockerfile line ${ins.line}: ${ins.op} must be in exec (JSON array) form`);
  return v;
};

export function parseRuntimeStage(text: string): RuntimeStage {
  const all = instructions(text);
  const froms = all.map((ins, i) => ({ ins, i })).filter(({ ins }) => ins.op === 'FROM');
  const last = froms.at(-1);
  if (!last) throw new Error('Dockerfile: no FROM');
  const buildFrom = froms.find(({ ins }) => /\bAS\s+build\b/i.test(ins.args));
  const buildWorkdir = buildFrom ? (all.slice(buildFrom.i).find((x) => x.op === 'WORKDIR')?.args ?? '/') : '/';
  const base = last.ins.args.split(/\s+/)[0] ?? '';
  const major = /^node:(\d+)\b/.exec(base)?.[1];
  if (!major)
    throw new Error(`Dockerfile line ${last.ins.line}: the runtime stage must be FROM node:<major>-… (got ${base})`);
  const stage: RuntimeStage = {
    base,
    nodeMajor: Number(major),
    env: {},
    workdir: '/',
    copies: [],
    symlinks: [],
    user: '',
    entrypoint: [],
    cmd: [],
    buildWorkdir,
  };
  for (const ins of all.slice(last.i + 1)) {
    switch (ins.op) {
      case 'ENV': {
        for (const m of ins.args.matchAll(/(\w+)=("[^"]*"|\S+)/g))
          stage.env[m[1] ?? ''] = (m[2] ?? '').replace(/^"|"$/g, '');
        break;
      }
      case 'WORKDIR':
        stage.workdir = ins.args;
        break;
      case 'USER':
        stage.user = ins.args;
        break;
      case 'ENTRYPOINT':
        stage.entrypoint = jsonArray(ins);
        break;
      case 'CMD':
        stage.cmd = jsonArray(ins);
        break;
      case 'COPY': {
        const parts = ins.args.split(/\s+/);
        const flags = Object.fromEntries(
          parts
            .filter((p) => p.startsWith('--'))
            .map((p) => {
              const [k = '', v = ''] = p.slice(2).split('=');
              return [k, v];
            }),
        );
        const paths = parts.filter((p) => !p.startsWith('--'));
        const unknown = Object.keys(flags).filter((k) => !['from', 'chown', 'chmod'].includes(k));
        if (flags.from !== 'build' || paths.length !== 2 || unknown.length > 0)
          throw new Error(
            `Dockerfile line ${ins.line}: the image builder reproduces only \`COPY --from=build [--chown=] [--chmod=] <src> <dst>\`, not \`COPY ${ins.args}\``,
          );
        stage.copies.push({
          src: paths[0] ?? '',
          dst: paths[1] ?? '',
          ...(flags.chown ? { chown: flags.chown } : {}),
          ...(flags.chmod ? { chmod: flags.chmod } : {}),
        });
        break;
      }
      case 'RUN': {
        const m = /^ln -s (\S+) (\S+)$/.exec(ins.args);
        if (!m?.[1] || !m[2])
          throw new Error(
            `Dockerfile line ${ins.line}: the image builder reproduces only \`RUN ln -s <target> <path>\` in the runtime stage, not \`RUN ${ins.args}\``,
          );
        stage.symlinks.push({ target: m[1], path: m[2] });
        break;
      }
      default:
        throw new Error(
          `Dockerfile line ${ins.line}: the image builder does not reproduce \`${ins.op}\` in the runtime stage`,
        );
    }
  }
  return stage;
}

export function readRuntimeStage(path: string): RuntimeStage {
  return parseRuntimeStage(readFileSync(path, 'utf8'));
}
