// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package contracts

import (
	"bytes"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Reference imports to suppress errors if they are not otherwise used.
var (
	_ = bytes.Equal
	_ = errors.New
	_ = big.NewInt
	_ = common.Big1
	_ = types.BloomLookup
	_ = abi.ConvertType
)

// IdentityRegistryMetaData contains all meta data concerning the IdentityRegistry contract.
var IdentityRegistryMetaData = bind.MetaData{
	ABI: "[{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"string\",\"name\":\"agentURI\",\"type\":\"string\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"owner\",\"type\":\"address\"}],\"name\":\"Registered\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"string\",\"name\":\"newURI\",\"type\":\"string\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"updatedBy\",\"type\":\"address\"}],\"name\":\"URIUpdated\",\"type\":\"event\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"}],\"name\":\"getApproved\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"owner\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"operator\",\"type\":\"address\"}],\"name\":\"isApprovedForAll\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"}],\"name\":\"ownerOf\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"}],\"name\":\"tokenURI\",\"outputs\":[{\"internalType\":\"string\",\"name\":\"\",\"type\":\"string\"}],\"stateMutability\":\"view\",\"type\":\"function\"}]",
	ID:  "IdentityRegistry",
}

// IdentityRegistry is an auto generated Go binding around an Ethereum contract.
type IdentityRegistry struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *IdentityRegistry) GetABI() abi.ABI {
	return c.abi
}

// NewIdentityRegistry creates a new instance of IdentityRegistry.
func NewIdentityRegistry() *IdentityRegistry {
	parsed, err := IdentityRegistryMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &IdentityRegistry{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *IdentityRegistry) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackGetApproved is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x081812fc.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getApproved(uint256 agentId) view returns(address)
func (identityRegistry *IdentityRegistry) PackGetApproved(agentId *big.Int) []byte {
	enc, err := identityRegistry.abi.Pack("getApproved", agentId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetApproved is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x081812fc.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getApproved(uint256 agentId) view returns(address)
func (identityRegistry *IdentityRegistry) TryPackGetApproved(agentId *big.Int) ([]byte, error) {
	return identityRegistry.abi.Pack("getApproved", agentId)
}

// UnpackGetApproved is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x081812fc.
//
// Solidity: function getApproved(uint256 agentId) view returns(address)
func (identityRegistry *IdentityRegistry) UnpackGetApproved(data []byte) (common.Address, error) {
	out, err := identityRegistry.abi.Unpack("getApproved", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackIsApprovedForAll is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe985e9c5.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function isApprovedForAll(address owner, address operator) view returns(bool)
func (identityRegistry *IdentityRegistry) PackIsApprovedForAll(owner common.Address, operator common.Address) []byte {
	enc, err := identityRegistry.abi.Pack("isApprovedForAll", owner, operator)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackIsApprovedForAll is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe985e9c5.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function isApprovedForAll(address owner, address operator) view returns(bool)
func (identityRegistry *IdentityRegistry) TryPackIsApprovedForAll(owner common.Address, operator common.Address) ([]byte, error) {
	return identityRegistry.abi.Pack("isApprovedForAll", owner, operator)
}

// UnpackIsApprovedForAll is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xe985e9c5.
//
// Solidity: function isApprovedForAll(address owner, address operator) view returns(bool)
func (identityRegistry *IdentityRegistry) UnpackIsApprovedForAll(data []byte) (bool, error) {
	out, err := identityRegistry.abi.Unpack("isApprovedForAll", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackOwnerOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6352211e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function ownerOf(uint256 agentId) view returns(address)
func (identityRegistry *IdentityRegistry) PackOwnerOf(agentId *big.Int) []byte {
	enc, err := identityRegistry.abi.Pack("ownerOf", agentId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackOwnerOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6352211e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function ownerOf(uint256 agentId) view returns(address)
func (identityRegistry *IdentityRegistry) TryPackOwnerOf(agentId *big.Int) ([]byte, error) {
	return identityRegistry.abi.Pack("ownerOf", agentId)
}

// UnpackOwnerOf is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x6352211e.
//
// Solidity: function ownerOf(uint256 agentId) view returns(address)
func (identityRegistry *IdentityRegistry) UnpackOwnerOf(data []byte) (common.Address, error) {
	out, err := identityRegistry.abi.Unpack("ownerOf", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackTokenURI is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xc87b56dd.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function tokenURI(uint256 agentId) view returns(string)
func (identityRegistry *IdentityRegistry) PackTokenURI(agentId *big.Int) []byte {
	enc, err := identityRegistry.abi.Pack("tokenURI", agentId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTokenURI is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xc87b56dd.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function tokenURI(uint256 agentId) view returns(string)
func (identityRegistry *IdentityRegistry) TryPackTokenURI(agentId *big.Int) ([]byte, error) {
	return identityRegistry.abi.Pack("tokenURI", agentId)
}

// UnpackTokenURI is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xc87b56dd.
//
// Solidity: function tokenURI(uint256 agentId) view returns(string)
func (identityRegistry *IdentityRegistry) UnpackTokenURI(data []byte) (string, error) {
	out, err := identityRegistry.abi.Unpack("tokenURI", data)
	if err != nil {
		return *new(string), err
	}
	out0 := *abi.ConvertType(out[0], new(string)).(*string)
	return out0, nil
}

// IdentityRegistryRegistered represents a Registered event raised by the IdentityRegistry contract.
type IdentityRegistryRegistered struct {
	AgentId  *big.Int
	AgentURI string
	Owner    common.Address
	Raw      *types.Log // Blockchain specific contextual infos
}

const IdentityRegistryRegisteredEventName = "Registered"

// ContractEventName returns the user-defined event name.
func (IdentityRegistryRegistered) ContractEventName() string {
	return IdentityRegistryRegisteredEventName
}

// UnpackRegisteredEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Registered(uint256 indexed agentId, string agentURI, address indexed owner)
func (identityRegistry *IdentityRegistry) UnpackRegisteredEvent(log *types.Log) (*IdentityRegistryRegistered, error) {
	event := "Registered"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != identityRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(IdentityRegistryRegistered)
	if len(log.Data) > 0 {
		if err := identityRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range identityRegistry.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// IdentityRegistryURIUpdated represents a URIUpdated event raised by the IdentityRegistry contract.
type IdentityRegistryURIUpdated struct {
	AgentId   *big.Int
	NewURI    string
	UpdatedBy common.Address
	Raw       *types.Log // Blockchain specific contextual infos
}

const IdentityRegistryURIUpdatedEventName = "URIUpdated"

// ContractEventName returns the user-defined event name.
func (IdentityRegistryURIUpdated) ContractEventName() string {
	return IdentityRegistryURIUpdatedEventName
}

// UnpackURIUpdatedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy)
func (identityRegistry *IdentityRegistry) UnpackURIUpdatedEvent(log *types.Log) (*IdentityRegistryURIUpdated, error) {
	event := "URIUpdated"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != identityRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(IdentityRegistryURIUpdated)
	if len(log.Data) > 0 {
		if err := identityRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range identityRegistry.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}
