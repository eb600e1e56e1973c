import type { Command } from 'commander';

/** `pitchain demo`: the newcomer's first run over the embedded sample store. */
export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('Open the embedded sample store and show what pitchain answers (the `npm start` job).')
    .option('--store <dir>', 'store directory', 'data/sample')
    .action(async (options: { store: string }) => {
      process.stdout.write(`pitchain demo: sample store at ${options.store} (not built yet)\n`);
    });
}
