export { ClientService } from "./client-service.js";
