/** @module The settings of the stage being deployed (lib/config/stages.ts), for every infra module. */
import { type StageSettings, stageSettings } from "../lib/config/stages.js";

export const settings: StageSettings = stageSettings($app.stage);
