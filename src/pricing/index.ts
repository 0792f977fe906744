/** Pricing: one pure quote() shared by createTask and the calculator, the calculator itself, and the price list. */
export { quote, settleAutoLength, type Quote } from './quote.js';
export { calculatePrice, CalculatorError, CALCULATOR_PARAMS, type PriceResult, type CalculatorErrorCode } from './calculator.js';
export { priceList, priceListBody, type PriceList, type PriceListModel } from './list.js';
