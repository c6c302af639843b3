export { DelayedDelivery } from "./delayed-delivery.js";
export { TimerStore, type TimerSweepReport } from "./timer-store.js";
