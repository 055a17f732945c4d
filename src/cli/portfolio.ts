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

const USAGE = `usage: portfolio <submit <file.json> [--no-follow] | watch <id> | info <id> | cancel <id>>
  --url <server>  --key <apiKey> --secret <apiSecret> | --credentials <file> [--index N]  --interval <ms>`;

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
  const list = JSON.parse(readFileSync(file, 'utf8')) as { apiKey: string; apiSecret: string }[];
  const entry = list[Number(values.index ?? 0)];
  if (entry === undefined) throw new Error(`no credentials at index ${String(values.index ?? 0)} in ${file}`);
  return { apiKey: entry.apiKey, apiSecret: entry.apiSecret };
}

async function watch(
  http: HttpClient,
  ws: WsClient | null,
  portfolioId: number,
  intervalMs: number,
  print: (line: string) => void,
): Promise<PortfolioInfoWire> {
  if (ws !== null) {
    await ws.subscribe(['trade-news'], (push: SubscriptionPush) => {
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
    });
  }
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
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      key: { type: 'string' },
      secret: { type: 'string' },
      credentials: { type: 'string' },
      index: { type: 'string' },
      interval: { type: 'string' },
      'no-follow': { type: 'boolean' },
    },
  });
  const [command, argument] = positionals;
  if (command === undefined || argument === undefined) {
    print(USAGE);
    return;
  }
  const url = (values.url as string | undefined) ?? `http://127.0.0.1:${loadConfig().port}`;
  const credentials = credentialsFrom(values);
  const http = new HttpClient({ baseUrl: url, credentials });
  const interval = Number(values.interval ?? 1000);
  const follow = async (portfolioId: number) => {
    const ws = new WsClient({ url: `${url.replace(/^http/, 'ws')}/ws`, credentials });
    try {
      await ws.connect();
      await ws.auth();
      const info = await watch(http, ws, portfolioId, interval, print);
      process.exitCode = info.portfolioStatus === 'COMPLETED' ? 0 : 2;
    } finally {
      await ws.close();
    }
  };
  switch (command) {
    case 'submit': {
      const body = JSON.parse(readFileSync(argument, 'utf8')) as unknown;
      const { portfolioId } = await http.flat<{ portfolioId: number }>(
        'POST',
        `${PORTFOLIO_BASE_PATH}/submit`,
        body,
      );
      print(`submitted portfolio ${portfolioId}`);
      if (!values['no-follow']) await follow(portfolioId);
      return;
    }
    case 'watch':
      await follow(Number(argument));
      return;
    case 'info':
      print(
        JSON.stringify(
          await http.flat('GET', `${PORTFOLIO_BASE_PATH}/info?portfolioId=${Number(argument)}`),
          null,
          2,
        ),
      );
      return;
    case 'cancel':
      await http.flat('POST', `${PORTFOLIO_BASE_PATH}/cancel`, { portfolioId: Number(argument) });
      print(`cancel requested for portfolio ${argument}`);
      return;
    default:
      print(USAGE);
  }
}

if (process.argv[1]?.endsWith('portfolio.ts')) {
  runPortfolioCli(process.argv.slice(2)).catch((error: unknown) => {
    const data = (error as { data?: unknown }).data;
    console.error(`${(error as Error).message}${data ? ` ${JSON.stringify(data)}` : ''}`);
    process.exitCode = 1;
  });
}
