#!/usr/bin/env node
/** Entry point of the `gpucompute` command (the package's bin). */
import { runCli } from './cli.js';

process.exitCode = await runCli(process.argv.slice(2));
