// Where a browser test stood when it failed. Its pages wait without deadlines
// (the test's safety-net timeout is the only bound), so a wait that never ends
// says nothing by itself: the trail keeps one timeline of the steps the test
// announced and of what its pages did (navigations, what each loaded page shows,
// console lines, failed requests), and prints it, with each page's URL and its
// requests still unanswered, when the test fails or runs out of time.
import type { Page, Request } from 'playwright-core';
import { onTestFailed } from 'vitest';

/** A timeline longer than this keeps its newest entries (a page polling for minutes adds a few a poll). */
const ENTRIES_MAX = 400;
/** A console line or page text is cut to this many characters. */
const TEXT_MAX_CHARS = 300;

export interface PageTrail {
  /** Names the step the test is in now (what it waits for next); it stays until the next step. */
  step(what: string): void;
  /** Records what `page` does from now on, under `name`, until it closes. */
  watch(page: Page, name: string): Page;
  /** Something outside the pages to print with the trail (e.g. a simulator's notifications). */
  alsoPrint(describe: () => string): void;
}

function cut(text: string): string {
  return text.length > TEXT_MAX_CHARS ? `${text.slice(0, TEXT_MAX_CHARS)}…` : text;
}

/** What a loaded page shows: its data-status markers and its first heading. */
function shownOn(page: Page): Promise<string> {
  return page.evaluate(() => {
    const statuses = [...document.querySelectorAll<HTMLElement>('[data-status]')].map((el) => el.dataset.status);
    const heading = document.querySelector('h1, h2')?.textContent?.trim() ?? '';
    return `data-status=[${statuses.join(',')}] heading="${heading}"`;
  });
}

/** A trail for the test that calls it (inside `it`), printed to stderr if that test fails. */
export function pageTrailForThisTest(): PageTrail {
  const started = performance.now();
  const entries: string[] = [];
  const pages = new Map<string, { readonly page: Page; readonly inFlight: Set<Request> }>();
  const extras: Array<() => string> = [];
  let currentStep = '(none announced)';

  function record(line: string): void {
    entries.push(`+${Math.round(performance.now() - started)}ms ${line}`);
    if (entries.length > ENTRIES_MAX) entries.splice(0, entries.length - ENTRIES_MAX);
  }

  function printed(): string {
    const lines = [`browser test failed during step: ${currentStep}`];
    for (const [name, { page, inFlight }] of pages) {
      const pending = [...inFlight].map((request) => `${request.method()} ${request.url()}`);
      lines.push(
        `page ${name}: ${page.isClosed() ? 'closed' : `at ${page.url()}`}; unanswered: ${pending.join(', ') || 'none'}`,
      );
    }
    for (const describe of extras) lines.push(describe());
    lines.push('timeline:', ...entries.map((entry) => `  ${entry}`));
    return lines.join('\n');
  }

  onTestFailed(() => {
    process.stderr.write(`${printed()}\n`);
  });

  return {
    step(what) {
      currentStep = what;
      record(`step: ${what}`);
    },
    watch(page, name) {
      const inFlight = new Set<Request>();
      pages.set(name, { page, inFlight });
      page.on('framenavigated', (frame) => {
        if (frame === page.mainFrame()) record(`${name} navigated to ${frame.url()}`);
      });
      page.on('load', () => {
        // Reading the page may lose to its next navigation; the navigation is then on the timeline.
        shownOn(page).then(
          (shown) => record(`${name} loaded ${page.url()}: ${cut(shown)}`),
          () => {},
        );
      });
      page.on('console', (message) => record(`${name} console ${message.type()}: ${cut(message.text())}`));
      page.on('pageerror', (error) => record(`${name} page error: ${cut(error.message)}`));
      page.on('response', (response) => {
        const request = response.request();
        const line = `${name} got ${response.status()} for ${request.method()} ${request.url()}`;
        if (request.isNavigationRequest()) record(line);
        // What a page's script fetched (e.g. a status poll) and read.
        else if (request.resourceType() === 'fetch')
          response.text().then(
            (body) => record(`${line}: ${cut(body)}`),
            () => record(line),
          );
      });
      page.on('request', (request) => inFlight.add(request));
      page.on('requestfinished', (request) => inFlight.delete(request));
      page.on('requestfailed', (request) => {
        inFlight.delete(request);
        record(`${name} request failed: ${request.method()} ${request.url()}: ${request.failure()?.errorText ?? ''}`);
      });
      page.on('close', () => record(`${name} closed`));
      return page;
    },
    alsoPrint(describe) {
      extras.push(describe);
    },
  };
}
