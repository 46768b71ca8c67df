// How a command of zerodrop's (the CLI, the bench) ends: once its output is written, rather than when
// Node finds nothing left to run. Each command awaits every teardown of its own before it gets here,
// so nothing of the run remains to finish.

/**
 * Left to itself, a 90-minute campaign's process printed its summary and then spun one core at
 * 100 % for an hour inside Node's exit cleanup (Environment::CleanupHandles looping on uv_run with no
 * handle or request left in the loop, as in https://github.com/nodejs/node/issues/47748); and a
 * reporter module that leaves a timer running would keep the command from ending at all.
 * `process.exit` still runs the 'exit' hooks that kill any pod or server left.
 */
export async function endProcess(): Promise<never> {
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit();
}

/** Resolves once what was written to `stream` before it has been handed to the OS (a pipe's reader may be slow). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) resolve();
    else stream.write('', () => resolve());
  });
}
