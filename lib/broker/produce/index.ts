export { SendService } from "./send-service.js";
