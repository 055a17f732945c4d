/**
 * Portfolio CLI: submits a portfolio from a JSON file (the flat body of spec 2.1) and shows its
 * progress live until it ends: per-leg progress bars, fills (from `trade-news`), average price and
 * slippage against arrival.
 *
 *   npm run portfolio -- submit <file.json> [--no-follow]
 *   npm run portfolio -- watch <portfolioId>
 *   npm run portfolio -- info <portfolioId>  |  cancel <portfolioId>
 *
 * Options: --url <server> (default http://127.0.0.1:$PORT), credentials from --key/--secret, or
 * API_KEY/API_SECRET, or --credentials <DATA_DIR/credentials.json> [--index N] (default: the
 * demo credentials under DATA_DIR, entry 0). --interval <ms> between info polls (default 1000).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { HttpClient } from '../../sdk/http-client.ts';
import type { SubscriptionPush } from '../../sdk/types.ts';
import { WsClient } from '../../sdk/ws-client.ts';
import { PORTFOLIO_BASE_PATH } from '../api/portfolios/routes.ts';
import type { PortfolioInfoWire } from '../api/portfolios/wire.ts';
import { loadConfig } from '../app/config.ts';

const TERMINAL = new Set(['COMPLETED', 'CANCELLED', 'EXPIRED', 'FAILED']);
const BAR_WIDTH = 24;

export const USAGE = `usage: npm run portfolio -- <command> [options]
  submit <file.json> [--no-follow]   submit the flat body of spec 2.1, then follow it live
  watch <portfolioId>                follow a portfolio until it ends (exit 0 when COMPLETED, else 2)
  info <portfolioId>                 print its info
  cancel <portfolioId>               ask to cancel it
options: --url <service> (default http://127.0.0.1:$PORT)
  --key <apiKey> --secret <apiSecret> (or API_KEY/API_SECRET), or --credentials <file> [--index N]
  (default DATA_DIR/credentials.json, entry 0);  --interval <ms> between info polls (>= 100,
  default 1000);  -h, --help`;

/** Polls faster than this would spend a key's request budget on progress bars. */
const MIN_INTERVAL_MS = 100;
/** The longest wait a Node timer takes (2^31 − 1 ms); a longer one fires after 1 ms. */
const MAX_INTERVAL_MS = 2_147_483_647;

/** A mistake in the command line: its message is printed and the exit code is 1. */
class UsageError extends Error {}

function portfolioIdOf(text: string): number {
  const id = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(id) || id <= 0) {
    throw new UsageError(`portfolioId must be a positive integer, got '${text}'`);
  }
  return id;
}

function readJson(file: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${what} ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`${what} ${file} is not JSON: ${(error as Error).message}`);
  }
}

function bar(fraction: number): string {
  const filled = Math.max(0, Math.min(BAR_WIDTH, Math.round(fraction * BAR_WIDTH)));
  return `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`;
}

/** The progress block for one info answer (pure; tested). */
export function renderProgress(info: PortfolioInfoWire): string[] {
  const lines = [
    `portfolio ${info.portfolioId} ${info.portfolioType} ${info.portfolioStatus}` +
      (info.currentPart === null
        ? ''
        : ` part ${info.currentPart + 1}${info.balanceTrade ? `/${info.balanceTrade.parts}` : ''}`) +
      (info.endReason ? ` (${info.endReason}${info.endMessage ? `: ${info.endMessage}` : ''})` : ''),
  ];
  for (const leg of info.legs) {
    const fraction = Number(leg.filledQuantity) / Number(leg.quantity);
    const side = leg.side === 1 ? 'BUY ' : 'SELL';
    const slippage = leg.slippageBps === null ? '' : ` slippage ${leg.slippageBps.toFixed(2)} bps`;
    const average = leg.averagePrice === null ? '' : ` avg ${leg.averagePrice}`;
    const arrival = leg.arrivalPrice === null ? '' : ` arrival ${leg.arrivalPrice}`;
    lines.push(
      `  ${side} ${leg.instrument.padEnd(24)} ${bar(fraction)} ${leg.filledQuantity}/${leg.quantity}` +
        `${leg.hedge ? ' hedge' : ''}${leg.priority ? ' priority' : ''}${average}${arrival}${slippage}`,
    );
  }
  return lines;
}

function credentialsFrom(values: Record<string, string | boolean | undefined>) {
  const key = (values.key as string | undefined) ?? process.env.API_KEY;
  const secret = (values.secret as string | undefined) ?? process.env.API_SECRET;
  if (key && secret) return { apiKey: key, apiSecret: secret };
  const file = (values.credentials as string | undefined) ?? join(loadConfig().dataDir, 'credentials.json');
  const list = readJson(file, 'credentials file') as { apiKey: string; apiSecret: string }[];
  const entry = list[Number(values.index ?? 0)];
  if (entry === undefined) throw new Error(`no credentials at index ${String(values.index ?? 0)} in ${file}`);
  return { apiKey: entry.apiKey, apiSecret: entry.apiSecret };
}

/**
 * Prints the fills and events `trade-news` pushes for one portfolio. Subscribed before a submit,
 * so a first slice that fills at once is shown too: pushes wait until the id is known.
 */
export async function followNews(
  ws: Pick<WsClient, 'subscribe'>,
  print: (line: string) => void,
): Promise<(id: number) => void> {
  let portfolioId: number | null = null;
  const early: SubscriptionPush[] = [];
  const show = (push: SubscriptionPush) => {
    const data = push.data as {
      type: string;
      portfolioId: number;
      instrument?: string;
      quantity?: string;
      price?: string | null;
    };
    if (data.portfolioId !== portfolioId) return;
    if (data.type === 'ORDER_FILLED') print(`  fill ${data.instrument} ${data.quantity} @ ${data.price}`);
    else if (data.type !== 'ORDER_PLACED') print(`  ${data.type}`);
  };
  await ws.subscribe(['trade-news'], (push) => {
    if (portfolioId === null) early.push(push);
    else show(push);
  });
  return (id) => {
    portfolioId = id;
    for (const push of early.splice(0)) show(push);
  };
}

async function watch(
  http: HttpClient,
  portfolioId: number,
  intervalMs: number,
  print: (line: string) => void,
): Promise<PortfolioInfoWire> {
  let last = '';
  for (;;) {
    const info = await http.flat<PortfolioInfoWire>(
      'GET',
      `${PORTFOLIO_BASE_PATH}/info?portfolioId=${portfolioId}`,
    );
    const block = renderProgress(info).join('\n');
    if (block !== last) print(block);
    last = block;
    if (TERMINAL.has(info.portfolioStatus)) return info;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export async function runPortfolioCli(
  argv: readonly string[],
  print: (line: string) => void = console.log,
): Promise<void> {
  let parsed: ReturnType<typeof parsePortfolioCli>;
  try {
    parsed = parsePortfolioCli(argv);
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    print(USAGE);
    return;
  }
  const [command, argument] = positionals;
  if (command === undefined) throw new UsageError(USAGE);
  if (!['submit', 'watch', 'info', 'cancel'].includes(command)) {
    throw new UsageError(`unknown command '${command}'\n${USAGE}`);
  }
  if (argument === undefined) {
    throw new UsageError(
      `${command} needs ${command === 'submit' ? '<file.json>' : '<portfolioId>'}\n${USAGE}`,
    );
  }
  const interval = values.interval === undefined ? 1000 : Number(values.interval);
  // Plain digits only (not `1e3` or `0x64`), and no longer than a timer can wait: Node fires a
  // longer setTimeout after 1 ms, which would poll the service in a loop.
  if (
    (values.interval !== undefined && !/^\d+$/.test(values.interval)) ||
    interval < MIN_INTERVAL_MS ||
    interval > MAX_INTERVAL_MS
  ) {
    throw new UsageError(
      `--interval must be a whole number of milliseconds from ${MIN_INTERVAL_MS} to ${MAX_INTERVAL_MS}, got '${values.interval}'`,
    );
  }
  const body = command === 'submit' ? readJson(argument, 'portfolio file') : undefined;
  const portfolioId = command === 'submit' ? 0 : portfolioIdOf(argument);
  const url = values.url ?? `http://127.0.0.1:${loadConfig().port}`;
  const credentials = credentialsFrom(values);
  const http = new HttpClient({ baseUrl: url, credentials });
  try {
    switch (command) {
      case 'submit':
      case 'watch': {
        const follow = command === 'watch' || !values['no-follow'];
        const ws = follow ? new WsClient({ url: `${url.replace(/^http/, 'ws')}/ws`, credentials }) : null;
        try {
          let showNews: (id: number) => void = () => {};
          if (ws !== null) {
            await ws.connect();
            await ws.auth();
            showNews = await followNews(ws, print);
          }
          let id = portfolioId;
          if (command === 'submit') {
            ({ portfolioId: id } = await http.flat<{ portfolioId: number }>(
              'POST',
              `${PORTFOLIO_BASE_PATH}/submit`,
              body,
            ));
            print(`submitted portfolio ${id}`);
          }
          if (ws === null) return;
          showNews(id);
          const info = await watch(http, id, interval, print);
          process.exitCode = info.portfolioStatus === 'COMPLETED' ? 0 : 2;
        } finally {
          await ws?.close();
        }
        return;
      }
      case 'info':
        print(
          JSON.stringify(
            await http.flat('GET', `${PORTFOLIO_BASE_PATH}/info?portfolioId=${portfolioId}`),
            null,
            2,
          ),
        );
        return;
      case 'cancel':
        await http.flat('POST', `${PORTFOLIO_BASE_PATH}/cancel`, { portfolioId });
        print(`cancel requested for portfolio ${portfolioId}`);
        return;
    }
  } catch (error) {
    throw unreachable(error, url);
  }
}

/** A connection failure as a sentence naming the service's address; other errors as they are. */
function unreachable(error: unknown, url: string): unknown {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const refused = (error as { code?: string }).code === 'ECONNREFUSED';
  if (!refused && !(error instanceof TypeError && error.message === 'fetch failed')) return error;
  const reason = cause?.code ?? cause?.message ?? (error as { code?: string }).code;
  return new Error(`cannot reach the service at ${url} (${reason}): is it running? (--url, or PORT)`);
}

const PORTFOLIO_CLI_OPTIONS = {
  url: { type: 'string' },
  key: { type: 'string' },
  secret: { type: 'string' },
  credentials: { type: 'string' },
  index: { type: 'string' },
  interval: { type: 'string' },
  'no-follow': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const OPTION_ARGS = new Set(['-h', ...Object.keys(PORTFOLIO_CLI_OPTIONS).map((name) => `--${name}`)]);
const VALUE_OPTION_ARGS = new Set(
  Object.entries(PORTFOLIO_CLI_OPTIONS)
    .filter(([, option]) => option.type === 'string')
    .map(([name]) => `--${name}`),
);

/**
 * Joins `--name value` into `--name=value` for the options that take a value. An API secret is
 * base64url, so one in 64 starts with `-`, which parseArgs would otherwise refuse as ambiguous.
 * A value that is itself one of our option names is left alone, so a forgotten value still fails.
 */
function joinOptionValues(argv: readonly string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = argv[i + 1];
    if (VALUE_OPTION_ARGS.has(arg) && value !== undefined && !OPTION_ARGS.has(value.split('=')[0]!)) {
      joined.push(`${arg}=${value}`);
      i++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

export function parsePortfolioCli(argv: readonly string[]) {
  return parseArgs({
    args: joinOptionValues(argv),
    allowPositionals: true,
    options: PORTFOLIO_CLI_OPTIONS,
  });
}

if (process.argv[1]?.endsWith('portfolio.ts')) {
  runPortfolioCli(process.argv.slice(2)).catch((error: unknown) => {
    const data = (error as { data?: unknown }).data;
    console.error(`${(error as Error).message}${data ? ` ${JSON.stringify(data)}` : ''}`);
    process.exitCode = 1;
  });
}
