// --js-library (wasm.cmake): embind's registration and calling of free functions, cut to
// what the boundary uses. bindings.cc binds a few functions of integers, each once, and
// registers them after embind's builtin types (static constructors run in that order), so
// their types are always resolved at once. Left out of embind's own version (about 1 KB
// gzip of JS):
// - overloads by argument count (exposePublicSymbol's table): every name is bound once;
// - the placeholder that throws UnboundTypeError naming the missing types while a type is
//   not yet registered: a function over a type that never registers (embind-builtins.cc)
//   stays undefined instead;
// - dynCall for signatures with 64-bit integers ('j'): refused here instead;
// - class methods and argument destructors in the invoker: integers and void have none,
//   and the types that do (strings, val) register as nothing (embind-builtins.cc);
// - reading integers from memory (readValueFromPointer), which only class properties,
//   value objects and containers use;
// - extendError's named constructors and stack rewriting: a plain Error subclass.
mergeInto(LibraryManager.library, {
  _embind_register_function__deps: ['$craftInvokerFunction', '$heap32VectorToArray', '$readLatin1String',
    '$whenDependentTypesAreResolved', '$throwBindingError'],
  _embind_register_function: function(name, argCount, rawArgTypesAddr, signature, rawInvoker, fn) {
    var argTypes = heap32VectorToArray(argCount, rawArgTypesAddr);
    name = readLatin1String(name);
    if (readLatin1String(signature).includes('j') || Module.hasOwnProperty(name)) {
      throwBindingError('cannot bind ' + name + ': 64-bit integers or a second binding of the name');
    }
    rawInvoker = wasmTable.get(rawInvoker);
    whenDependentTypesAreResolved([], argTypes, function(argTypes) {
      Module[name] = craftInvokerFunction(name, argTypes, null, rawInvoker, fn);
      return [];
    });
  },
  // argTypes: the return type, then the parameters' (no `this`).
  $craftInvokerFunction__deps: ['$throwBindingError'],
  $craftInvokerFunction: function(humanName, argTypes, classType, cppInvokerFunc, cppTargetFunc) {
    var expected = argTypes.length - 1;
    return function() {
      if (arguments.length !== expected) {
        throwBindingError(humanName + ' called with ' + arguments.length + ' arguments, expected ' + expected);
      }
      var args = [cppTargetFunc];
      for (var i = 0; i < expected; ++i) args.push(argTypes[i + 1]['toWireType'](null, arguments[i]));
      return argTypes[0]['fromWireType'](cppInvokerFunc.apply(null, args));
    };
  },
  _embind_register_integer__deps: ['$readLatin1String', '$registerType'],
  _embind_register_integer: function(primitiveType, name, size, minRange, maxRange) {
    name = readLatin1String(name);
    var bitshift = 32 - 8 * size;
    registerType(primitiveType, {
      name: name,
      // An unsigned narrower than 32 bits comes back as its low bits, unsigned.
      'fromWireType': minRange === 0 ? (value) => (value << bitshift) >>> bitshift : (value) => value,
      'toWireType': name.includes('unsigned') ? (destructors, value) => value >>> 0 : (destructors, value) => value,
      'argPackAdvance': 8,
      destructorFunction: null,
    });
  },
  $extendError__deps: [],
  $extendError: function(baseErrorType, errorName) {
    var errorClass = function(message) {
      this.name = errorName;
      this.message = message;
      this.stack = new Error(message).stack;
    };
    errorClass.prototype = Object.create(baseErrorType.prototype);
    errorClass.prototype.constructor = errorClass;
    return errorClass;
  },
});
